"""The verdict table: every claim of every exercise judged once per report, its family's p adjusted together.

Everything that shows a verdict reads this table: the report's claims table and its counts, the knock-out
section, the tags on each exercise's parent run (analysis.report.parent_runs), `make report`'s summary line
and, for a notebook, `runs.verdicts()`. It reads numbers only, each exercise's through the two lookups of
ExerciseResults (results.py): the store's runs (analysis.store_reading) or plain numbers (Numbers); each claim is
judged as its kind's entry says (claim_kinds.py). A claim may read another exercise's variant
(`baseline:base.knockout_prev_head_b1`): its lookups go to that exercise's results.
"""
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from analysis.verdicts import claim_kinds, claims, decision
from analysis.verdicts.results import ExerciseResults
from lm.spec.exercises import Claim, NotRun

COLUMNS = ["exercise", "claim", "lessons", "ours", "margin (95% interval)", "method", "seeds", "p", "p (adjusted)",
           "verdict", "note"]


@dataclass
class Row:
    """One claim of one exercise and its verdict."""
    exercise: str
    index: int          # the claim's place in its exercise's list, from 1
    claim: Claim
    verdict: claims.Verdict

    @property
    def numbers(self) -> list[tuple[str, str, int | None]]:
        """The (variant, key, step) numbers its verdict rests on, as the claim's kind says (a check's, a value
        claim's number)."""
        return claim_kinds.numbers_read(self.claim)

    def reads(self, prefix: str) -> bool:
        """Whether its verdict rests on a metric whose name starts with prefix."""
        return any(key.startswith(prefix) for _, key, _ in self.numbers)


class Table:
    """Every claim's verdict, and the family of comparisons whose p were adjusted together."""

    def __init__(self, rows: list[Row]):
        self.rows = rows
        self.family = [c for r in rows if not r.verdict.finding for c in r.verdict.comparisons if c.p is not None]

    def of(self, exercise: str) -> list[Row]:
        return [r for r in self.rows if r.exercise == exercise]

    def counts(self, exercise: str | None = None) -> dict[str, int]:
        """Claims per verdict, in claims.VERDICTS' order (those with none left out): the table's, or one
        exercise's."""
        rows = self.rows if exercise is None else self.of(exercise)
        count = Counter(r.verdict.verdict for r in rows if r.verdict.verdict)
        return {str(k): count[k] for k in claims.VERDICTS if count[k]}

    def summary(self, exercise: str | None = None) -> str:
        """'12 reproduced, 3 within seed noise, ...': the table's, or one exercise's."""
        return ", ".join(f"{n} {k}" for k, n in self.counts(exercise).items()) or "no claims"

    def frame(self) -> pd.DataFrame:
        """One row per claim, the report's columns."""
        rows = [{"exercise": r.exercise, "claim": r.verdict.text, "lessons": r.verdict.lesson or "-",
                 "ours": r.verdict.ours or "-", "margin (95% interval)": r.verdict.interval or "-",
                 "method": r.verdict.method or "-", "seeds": r.verdict.seeds or "-", "p": r.verdict.p or "-",
                 "p (adjusted)": r.verdict.p_adjusted or "-", "verdict": r.verdict.label or "-",
                 "note": r.verdict.note} for r in self.rows]
        return pd.DataFrame(rows, columns=COLUMNS)

    def preamble(self) -> str:
        """The family, the method and the level, in words, for the report."""
        return (f"Multiplicity: the family is {decision.FAMILY.replace('MIN_SEEDS', str(decision.MIN_SEEDS))}; "
                f"{len(self.family)} comparisons here. Their p-values are adjusted together by "
                f"{decision.METHOD.title()}'s method, which holds the chance of any wrong firm verdict in the table "
                f"at {decision.ALPHA:.0%} (family-wise, two-sided); a verdict follows the adjusted p, the interval "
                f"shown is the comparison's own 95% interval. Seeds are added only at fixed looks "
                f"({', '.join(map(str, decision.LOOKS))} seeds per variant; `make decide`), the level spent over "
                f"them ({', '.join(f'{w:.3g}' for w in decision.SPEND)} of it): a comparison's p is the least of "
                f"its looks' p, each divided by its look's share, so adding seeds keeps the table's error rate. "
                f"A firm verdict needs {decision.MIN_SEEDS} seeds: "
                f"below that a row is indicative. A lesson's single number is reproduced when it lies in our "
                f"95% prediction interval for one more run, mean ± t·s·√(1 + 1/n), widened by "
                f"{decision.TOLERANCE:.0%} of the number for the difference of setup "
                f"(analysis/verdicts/decision.py says why each of these).")


def lookups(runs: Mapping[str, ExerciseResults], name: str):
    """The mean and per-seed lookups of exercise `name`, a qualified variant ("baseline:base") sent to its own
    exercise's runs."""
    def route(variant: str):
        if ":" not in variant:
            return runs[name], variant
        exercise, own = variant.split(":", 1)
        if exercise not in runs:
            raise NotRun(f"{variant}: the exercise {exercise} is not in this report")
        return runs[exercise], own

    def lookup(variant, key, step=None):
        er, v = route(variant)
        return er.lookup(v, key, step)

    def per_seed(variant, key, step=None):
        try:
            er, v = route(variant)
        except NotRun:
            return None
        return er.per_seed(v, key, step)

    return lookup, per_seed


def first_seeds(per_seed, n: int):
    """The per-seed lookup cut to each variant's first n seeds (its lowest seed numbers): what one look sees."""
    def cut(variant, key, step=None):
        per = per_seed(variant, key, step)
        return None if per is None else {s: per[s] for s in sorted(per)[:n]}
    return cut


def at_looks(claim: Claim, lookup, variants: list[str], per_seed) -> claims.Verdict:
    """One claim judged at every look it reached (decision.LOOKS): its verdict is the last look's, and each of its
    comparisons carries its raw p at every look (`looks`), from which its sequential p is read."""
    counts = []

    def counting(variant, key, step=None):
        per = per_seed(variant, key, step)
        if per:
            counts.append(len(per))
        return per

    whole = claim_kinds.judge(claim, lookup, variants, counting)
    last = decision.look(min(counts)) if counts else None
    if last is None or not whole.comparisons:
        return whole
    seen = [claim_kinds.judge(claim, lookup, variants, first_seeds(per_seed, n)) for n in decision.LOOKS if n <= last]
    v = seen[-1]
    for k, c in enumerate(v.comparisons):
        c.looks = {n: earlier.comparisons[k].raw_p for n, earlier in zip(decision.LOOKS, seen)
                   if len(earlier.comparisons) == len(v.comparisons) and earlier.comparisons[k].n == n
                   and earlier.comparisons[k].raw_p is not None} or None
    v.looked = (last, max(counts))
    claims.settle(v)
    return v


def table(runs: Mapping[str, ExerciseResults]) -> Table:
    """Every claim judged at every look it reached, the family's sequential p adjusted together (decision.METHOD),
    every claim settled again."""
    rows = []
    for name, er in runs.items():
        lookup, per_seed = lookups(runs, name)
        for i, c in enumerate(er.exercise.claims, 1):
            rows.append(Row(name, i, c, at_looks(c, lookup, list(er.exercise.variants), per_seed)))
    t = Table(rows)
    for c, q in zip(t.family, decision.adjust([c.p for c in t.family])):
        c.p_adjusted = float(q)
    for r in rows:
        if r.verdict.verdict not in (claims.NOT_RUN, claims.NOT_APPLICABLE, claims.NOT_MEASURED, ""):
            claims.settle(r.verdict)
    return t
