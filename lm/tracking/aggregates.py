"""An exercise's result on its parent run: per variant, the mean, spread and seed count of its headline metrics.

The parent run of an exercise gets, for each variant with a finished child run and each headline metric, a tag
`<variant>/<metric>` reading `1.523 ± 0.012 (3 seeds)`: the mean, the sample standard deviation (with two seeds or
more, as the report's mean ± std) and the seed count, so the runs table shows them, readable, without opening the
children; and each mean as a metric, for the parent's Metrics panel. The charts views leave the parent out of their
grouped charts (lm/tracking/views.py): there, its metrics would be single bars of the parent alone. The headline
metrics are the validation loss and perplexity, every metric the exercise's claims read and the final values its
`ui:` block charts (lm/settings/ui.py). The suite refreshes them whenever it ends, so a seed that finishes later shows
in them.
"""
import re
from dataclasses import dataclass

import numpy as np

from lm.settings import ui
from lm.settings.exercises import Exercise, terms, tree

HEADLINE = ("val_loss", "val_perplexity")
# MLflow's metric and tag names take letters, digits, _ - . space : and / only; a sweep's variants are named like
# `n_head=2,n_layer=4`, which goes in as `n_head:2 n_layer:4`.
NAME = {"=": ":", ",": " "}


def prefix(variant: str) -> str:
    return re.sub(r"[^\w\-. :/]", lambda m: NAME.get(m[0], "_"), variant)


def headline(ex: Exercise) -> list[str]:
    """val_loss, val_perplexity, then what the claims' checks, values and answers name (`h4.val_loss`), then the
    final values the `ui:` block charts."""
    keys = dict.fromkeys(HEADLINE)
    for c in ex.claims:
        for expr in filter(None, (c.check, c.ours)):
            for variant, key, _ in terms(tree(expr)):
                if variant in ex.variants:   # not another exercise's (`baseline:base.key`)
                    keys[key] = None
        if c.answer:
            keys[c.answer] = None
    keys.update(dict.fromkeys(ui.final_values(ex)))
    return list(keys)


def number(x: float) -> str:
    """Four significant digits; a count of thousands or more in full (103,456, not 1.035e+05); a whole number as
    one (112,193, not 1.122e+05 or 112193.00)."""
    return f"{x:,.0f}" if abs(x) >= 1e4 or float(x).is_integer() else f"{x:.4g}"


@dataclass(frozen=True)
class Mean:
    """A variant's metric over its seeds, as numbers: the mean, the sample standard deviation (None for one seed, or
    where every seed gives the same count) and the seed count; str() is the parent run's tag, '1.523 ± 0.012 (3
    seeds)'."""
    mean: float
    std: float | None
    seeds: int

    @classmethod
    def of(cls, values: np.ndarray) -> "Mean":
        n = len(values)
        same_count = bool(np.all(values == values[0])) and float(values[0]).is_integer()
        return cls(float(values.mean()), float(values.std(ddof=1)) if n > 1 and not same_count else None, n)

    def __str__(self) -> str:
        spread = f" ± {self.std:.2g}" if self.std is not None else ""
        return f"{number(self.mean)}{spread} ({self.seeds} seed{'s' if self.seeds > 1 else ''})"


def describe(values: np.ndarray) -> str:
    """'1.523 ± 0.012 (3 seeds)': mean ± sample std and the seed count; the mean alone for one seed, or where
    every seed gives the same count ('112,193 (3 seeds)')."""
    return str(Mean.of(values))


def per_variant(runs, keys: list[str]) -> dict[str, np.ndarray]:
    """{`<variant>/<key>`: its values over seeds} from the finished child runs (mlflow Run objects), the newest run
    per (variant, seed)."""
    newest = {}
    for r in sorted(runs, key=lambda r: r.info.start_time or 0):
        tags = r.data.tags
        if r.info.status == "FINISHED" and "variant" in tags:
            newest[tags["variant"], tags.get("seed")] = r
    by_variant: dict[str, list] = {}
    for (variant, _), r in newest.items():
        by_variant.setdefault(variant, []).append(r)
    out = {}
    for variant, rs in by_variant.items():
        for key in keys:
            values = np.array([r.data.metrics[key] for r in rs if key in r.data.metrics], dtype=float)
            if len(values):
                out[f"{prefix(variant)}/{key}"] = values
    return out


def summarise(runs, keys: list[str]) -> dict[str, str]:
    """The tags for the parent, from the finished child runs (mlflow Run objects), one per (variant, seed)."""
    return {name: describe(values) for name, values in per_variant(runs, keys).items()}


def refresh(store, parent_id: str, ex: Exercise, children: list | None = None) -> dict[str, Mean]:
    """Recomputes and sets the parent run's per-variant tags, and each one's mean as a metric (the run's Metrics
    panel, in name order); returns each tag's numbers (its str() is the tag). children: the parent's finished child
    runs where the caller has them already (the suite, from the listing it read once), else read here."""
    if children is None:
        from lm.tracking.store import every_run  # MLflow, 3 s: the suite's command imports this module before it

        exp_id = store.client.get_run(parent_id).info.experiment_id
        children = every_run(store.client, [exp_id],  # only what summarise() reads: the finished ones
                             f"tags.mlflow.parentRunId = '{parent_id}' and attributes.status = 'FINISHED'")
    means = {name: Mean.of(v) for name, v in per_variant(children, headline(ex)).items()}
    store.set_tags(parent_id, {name: str(m) for name, m in means.items()})
    store.log_metrics(parent_id, {name: m.mean for name, m in means.items()})
    for child in children[:1]:  # the corpus, in the Dataset column of the exercise's own row
        store.client.log_inputs(parent_id, datasets=child.inputs.dataset_inputs)
    return means
