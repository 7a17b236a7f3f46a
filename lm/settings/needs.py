"""What an exercise's runs are read for, and so which end-of-run measurements they need: the metrics and artifacts
its claims name (in `check`, `ours` and `answer`, another exercise's claims naming its variants included), its
`report:` blocks read and its `ui:` charts draw, matched against the `provides` patterns of lm/settings/measures.py's
table. The suite makes an entry of When.READ only on the runs of a variant that needs it (lm/suite/measuring.py).
"""
import fnmatch
from collections.abc import Iterable

from lm.settings.claims import CLAIM_FIELDS, Claim
from lm.settings.exercises import Exercise, terms, tree
from lm.settings.measures import BY_NAME, TABLE, When

# What each report kind reads of its exercise's runs beyond the metrics its options name (METRIC_OPTIONS): the
# artifacts and metrics analysis/report/kinds.py and the section modules of analysis/report/sections/ read, their
# defaults included (tests/suite/test_measuring.py holds each kind's own lists of what it fetches to these).
KIND_READS = {
    "curves": ("val_loss",),
    "final": ("val_loss",),
    "sweep": ("val_loss",),
    "heads": ("heads.csv",),
    "attention": ("attention.json",),
    "by_position": ("val_loss_at_position",),
    "samples": ("samples.txt",),
    "against_time": ("val_loss", "train_time_s"),
    "baseline": ("probe.json", "attention.json", "heads.csv"),
    "scaling": ("val_loss", "train_time_s", "predicted_params", "n_params", "predicted_score_array_size",
                "score_array_size", "ms_per_step", "tokens_per_s"),
    "aa": ("val_loss",),
}
METRIC_OPTIONS = ("metric", "metrics", "baselines", "time")
DEFAULT_REPORT = ({"kind": "curves"}, {"kind": "final"})   # an exercise without a `report:` block


def _listed(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value or () if isinstance(v, str)]


def report_reads(entry: dict) -> set[str]:
    """What one entry of a `report:` block reads of every run it shows."""
    keys = set(KIND_READS.get(entry.get("kind"), ()))
    for option in METRIC_OPTIONS:
        keys.update(_listed(entry.get(option)))
    return keys


def reads(exercises: Iterable[Exercise]) -> dict[tuple[str, str], set[str]]:
    """Per (exercise, variant), every metric and artifact something reads of its runs."""
    exercises = list(exercises)
    out = {(ex.name, v): set() for ex in exercises for v in ex.variants}
    for ex in exercises:
        everywhere = {m for chart in (ex.ui or {}).values() for m in chart}
        for entry in DEFAULT_REPORT if ex.report is None else ex.report:
            shown = _listed(entry.get("variants")) or list(ex.variants)
            for v in shown:
                out.get((ex.name, v), set()).update(report_reads(entry))
        for v in ex.variants:
            out[ex.name, v].update(everywhere)
        for claim in ex.claims:
            if claim.answer:
                for v in ex.variants:
                    out[ex.name, v].add(claim.answer)
            for variant, key in named(ex, claim):
                out.setdefault(variant, set()).add(key)
    return out


def named(ex: Exercise, claim: Claim) -> list[tuple[tuple[str, str], str]]:
    """Each (exercise, variant) and metric a claim's `check` and `ours` name: its own exercise's variants, or
    another's as `exercise:variant`."""
    out = []
    for expr in filter(None, (claim.check, claim.ours)):
        for variant, key, _ in terms(tree(expr)):
            owner, _, name = variant.rpartition(":")
            out.append(((owner or ex.name, name), key))
    return out


def providing(keys: Iterable[str]) -> set[str]:
    """The entries of the measurement table whose `provides` patterns match any of the keys."""
    keys = list(keys)
    return {m.name for m in TABLE if any(fnmatch.fnmatchcase(k, p) for k in keys for p in m.provides)}


def needed(keys: Iterable[str], first_seed: bool) -> set[str]:
    """The entries a suite's run makes when these keys are read of it: every entry of When.ALWAYS, each of
    When.FIRST_SEED on a variant's first seed, any entry whose results are read, and what each of them needs."""
    made = {m.name for m in TABLE if m.when == When.ALWAYS or (m.when == When.FIRST_SEED and first_seed)}
    made |= providing(keys)
    while more := {n for name in made for n in BY_NAME[name].needs} - made:
        made |= more
    return made


def decided(exercises: Iterable[Exercise]) -> set[tuple[str, str]]:
    """Every (exercise, variant) that a claim with a verdict reads (a kind CLAIM_FIELDS marks `decided`: a value, a
    check, the A/A control), another exercise's claims naming its variants included: the variants whose seeds buy
    verdicts. The others are read by findings, questions, exact checks and charts alone."""
    return {variant for ex in exercises for claim in ex.claims if CLAIM_FIELDS[claim.kind].decided
            for variant, _ in named(ex, claim)}
