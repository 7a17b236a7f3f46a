"""What the verdict engine reads of an exercise's runs, and those results as plain numbers.

The engine judges on numbers. `ExerciseResults` is all it reads of one exercise: the exercise (its claims, its
variants) and three lookups, a variant's number as a mean over seeds, per seed, and per validation window of each
seed (where the runs logged it). The store's side implements it on MLflow
(analysis.store_reading.reader.ExerciseRuns); `Numbers` implements it on plain dicts, so a table can be built without
a store: in the tests, and to simulate the table's error rate through the table itself (analysis/calibration).
"""
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lm.settings.exercises import Exercise, NotRun

Value = float | str         # a metric's number, or a tag's text
PerSeed = dict[int, Value]  # {seed: value}
PerWindow = dict[int, Sequence[float]]  # {seed: the number on each validation window, in the windows' order}


class ExerciseResults(Protocol):
    """One exercise's results, as the engine reads them. A variant is named as a claim names it; another exercise's
    (`baseline:base`) goes to that exercise's results (claims_table.lookups)."""
    exercise: Exercise      # its claims, and its variants (a question's answer ranks them)

    def lookup(self, variant: str, key: str, step: int | None = None) -> Value:
        """The mean over seeds of a metric's final value (step None) or of the value logged at `step`, or a tag's
        most common value; raises lm.settings.exercises.NotRun (NotApplicable, NotMeasured) for what there is not."""

    def per_seed(self, variant: str, key: str, step: int | None = None) -> PerSeed | None:
        """The same number per seed, {seed: value}; None where there is none."""

    def windows(self, variant: str, key: str, step: int | None = None) -> PerWindow | None:
        """The same number per seed on each of the windows it averages, {seed: values in the windows' order}, the
        same windows in the same order for every run of a corpus and a context, so two runs pair window by window;
        None where they are not logged. The number is their mean; the engine reads them for the windows' error of a
        difference (claims.py)."""

    def groups(self) -> Iterator[tuple[str, str, int | None, PerSeed]]:
        """Every number it holds per seed, as (variant, key, step, {seed: value}): what the seeds' variance of each
        metric is pooled from (variance.py), every variant's whether or not a claim reads it."""


@dataclass
class Numbers:
    """One exercise's results from plain numbers: `final`, {variant: {metric or tag: {seed: value}}}, and `curves`,
    {variant: {metric: {step: {seed: value}}}}, and `windows`, {variant: {metric: {step or None: {seed: values on
    each window}}}}. A variant in neither was not run. A number the store derives from curves (the loss at a time
    budget, val_loss_at_budget) is given as the final number it is."""
    exercise: Exercise
    final: Mapping[str, Mapping[str, Mapping[int, Value]]]
    curves: Mapping[str, Mapping[str, Mapping[int, Mapping[int, Value]]]] = field(default_factory=dict)
    per_window: Mapping[str, Mapping[str, Mapping[int | None, PerWindow]]] = field(default_factory=dict)

    def windows(self, variant: str, key: str, step: int | None = None) -> PerWindow | None:
        return self.per_window.get(variant, {}).get(key, {}).get(step) or None

    def groups(self) -> Iterator[tuple[str, str, int | None, PerSeed]]:
        for variant, metrics in self.final.items():
            for key, per in metrics.items():
                yield variant, key, None, per
        for variant, metrics in self.curves.items():
            for key, steps in metrics.items():
                for step, per in steps.items():
                    yield variant, key, step, per

    def per_seed(self, variant: str, key: str, step: int | None = None) -> PerSeed | None:
        if step is None:
            per = self.final.get(variant, {}).get(key)
        else:
            per = self.curves.get(variant, {}).get(key, {}).get(step)
        return dict(per) if per else None

    def lookup(self, variant: str, key: str, step: int | None = None) -> Value:
        if variant not in self.final and variant not in self.curves:
            raise NotRun(f"{variant} was not run")
        per = self.per_seed(variant, key, step)
        if not per:
            raise NotRun(f"{variant}.{key}{'' if step is None else f'[{step}]'} was not logged")
        values = list(per.values())
        if any(isinstance(v, str) for v in values):  # a tag: the most common, the first in order among ties
            count = Counter(values)
            return min(count, key=lambda v: (-count[v], v))
        return sum(float(v) for v in values) / len(values)
