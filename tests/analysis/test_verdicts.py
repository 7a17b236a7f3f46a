"""The verdict table (analysis/verdicts.py): one family across exercises, its p adjusted by Holm, findings outside it."""
from types import SimpleNamespace

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from analysis import decision, verdicts
from analysis.claims import FINDING, NOT_REPRODUCED, REPRODUCED, WITHIN_NOISE
from lm.spec.exercises import Claim, NotRun


class Runs(SimpleNamespace):
    """An exercise's runs as the table reads them: {(variant, key): [value per seed]}."""

    def lookup(self, variant, key, step=None):
        if (variant, key) not in self.values:
            raise NotRun(f"{variant}.{key} was not run")
        return float(np.mean(self.values[variant, key]))

    def per_seed(self, variant, key, step=None):
        found = self.values.get((variant, key))
        return dict(enumerate(found, 1)) if found else None


def exercise(name, claims, values):
    variants = {v: [] for v, _ in values}
    return Runs(exercise=SimpleNamespace(name=name, claims=claims, variants=variants), values=values)


# Margins a paired t over 3 seeds puts at p ≈ 0.03 each: each alone excludes zero, nine together do not survive.
NEAR = [0.10, 0.14, 0.18]


def test_the_family_is_adjusted_together_by_holm_and_the_verdict_follows_the_adjusted_p():
    values = {("a", "x"): [0.0, 0.0, 0.0], **{(f"v{i}", "x"): NEAR for i in range(9)},
              ("far", "x"): [5.0, 5.1, 5.2]}
    checks = [Claim(text=f"v{i}", check=f"v{i}.x > a.x") for i in range(9)] + \
        [Claim(text="far", check="far.x > a.x"), Claim(text="q", check="v0.x > a.x", finding=True)]
    runs = {"one": exercise("one", checks, values)}
    t = verdicts.table(runs)
    raw = [c.p for c in t.family]
    assert len(raw) == 10 and all(0.01 < p < decision.ALPHA for p in raw[:9])   # the finding is outside it
    assert [c.p_adjusted for c in t.family] == pytest.approx(multipletests(raw, method="holm")[1])
    by = {r.claim.text: r.verdict for r in t.rows}
    assert all(by[f"v{i}"].verdict == WITHIN_NOISE for i in range(9))         # each alone: reproduced
    assert "not after Holm's correction" in by["v0"].note
    assert by["far"].verdict == REPRODUCED and by["q"].verdict == FINDING and by["q"].p_adjusted == ""
    frame = t.frame()
    assert list(frame.columns) == verdicts.COLUMNS and frame.loc[0, "p (adjusted)"] != "-"
    assert "Holm" in t.preamble() and f"{decision.MIN_SEEDS} seeds" in t.preamble()


def test_the_issues_two_not_reproduced_do_not_survive_holm_at_48():
    """Issue 23, defect 2: p 0.046 and 0.032 (df 2) among 48 comparisons."""
    p = [0.046, 0.032] + [0.5] * 46
    outcomes = decision.decide([-1.0] * 48, p)
    assert outcomes[:2] == [WITHIN_NOISE, WITHIN_NOISE]
    assert decision.decide([-1.0], [0.032]) == [NOT_REPRODUCED]    # alone, it was a verdict


def test_a_claim_reads_another_exercise_through_the_table():
    base = exercise("baseline", [], {("base", "k"): [0.40, 0.42, 0.41]})
    micro = exercise("microgpt", [Claim(text="m", check="microgpt.k < baseline:base.k", finding=True),
                                  Claim(text="gone", check="microgpt.k < nosuch:base.k")],
                     {("microgpt", "k"): [0.10, 0.12, 0.11]})
    t = verdicts.table({"baseline": base, "microgpt": micro})
    found, gone = t.of("microgpt")
    assert found.verdict.verdict == FINDING and "lower" in found.verdict.wording
    assert gone.verdict.verdict == "not run" and "nosuch" in gone.verdict.note
    assert t.summary("microgpt") == "1 finding, 1 not run"
