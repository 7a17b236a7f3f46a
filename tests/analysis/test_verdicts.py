"""The verdict table (analysis.verdicts.table): one family across exercises, its p adjusted by Holm, findings outside
it."""
import pytest
from statsmodels.stats.multitest import multipletests

from analysis import verdicts
from analysis.verdicts import decision, stats
from analysis.verdicts.claims import FINDING, NOT_REPRODUCED, REPRODUCED, WITHIN_NOISE
from analysis.verdicts.results import Numbers
from lm.spec.exercises import Claim, Exercise


def exercise(name, claims, values):
    """An exercise's results as plain numbers: {(variant, key): [value per seed]}, seeds numbered from 1."""
    final = {}
    for (variant, key), per in values.items():
        final.setdefault(variant, {})[key] = dict(enumerate(per, 1))
    ex = Exercise(name=name, title=name, lesson="-", measures="-", variants={v: [] for v, _ in values}, claims=claims)
    return Numbers(ex, final)


# Margins a paired t over 3 seeds puts at p ≈ 0.007 each: each alone is reproduced at the first look's share of
# the level, nine together do not survive.
NEAR = [0.12, 0.14, 0.16]


def test_the_family_is_adjusted_together_by_holm_and_the_verdict_follows_the_adjusted_p():
    values = {("a", "x"): [0.0, 0.0, 0.0], **{(f"v{i}", "x"): NEAR for i in range(9)},
              ("far", "x"): [5.0, 5.1, 5.2]}
    checks = [Claim(text=f"v{i}", check=f"v{i}.x > a.x") for i in range(9)] + \
        [Claim(text="far", check="far.x > a.x"), Claim(text="q", check="v0.x > a.x", finding=True)]
    runs = {"one": exercise("one", checks, values)}
    t = verdicts.table(runs)
    raw = [c.raw_p for c in t.family]
    assert len(raw) == 10 and all(0.005 < p < decision.ALPHA * decision.SPEND[0] for p in raw[:9])  # not the finding
    sequential = [c.p for c in t.family]
    assert sequential == pytest.approx([p / decision.SPEND[0] for p in raw])   # the first look spends half
    assert [c.p_adjusted for c in t.family] == pytest.approx(multipletests(sequential, method="holm")[1])
    by = {r.claim.text: r.verdict for r in t.rows}
    assert all(by[f"v{i}"].verdict == WITHIN_NOISE for i in range(9))         # each alone: reproduced
    assert "after Holm's correction over the table" in by["v0"].note
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


# --- issue 23, defect 3: seeds added after a look ------------------------------------------------------------
MARGINS = [0.30, 0.05, 0.20, 0.12, 0.22, 0.18, 0.25, 0.15]   # per-seed margins of v over a (zero)


def looked(n):
    values = {("a", "x"): [0.0] * n, ("v", "x"): MARGINS[:n]}
    return verdicts.table({"one": exercise("one", [Claim(text="v", check="v.x > a.x")], values)}).rows[0].verdict


def test_a_claim_with_added_seeds_is_judged_at_each_look_with_the_level_spent_over_them():
    v = looked(6)
    (c,) = v.comparisons
    p3 = stats.one_sample(MARGINS[:3]).p
    p6 = stats.one_sample(MARGINS[:6]).p
    assert c.looks == pytest.approx({3: p3, 6: p6})
    assert c.p == pytest.approx(min(p3 / decision.SPEND[0], p6 / decision.SPEND[1]))
    assert c.raw_p == pytest.approx(p6) and v.seeds == "6"
    assert "look 2 of 4, 6 seeds: seeds added after the first look (make decide)" in v.note


def test_seeds_between_two_looks_are_judged_at_the_lower_one():
    """The looks are fixed seed counts: a variant with 8 seeds is read on its first 6, and the table says so."""
    v = looked(8)
    assert v.seeds == "6" and set(v.comparisons[0].looks) == {3, 6}
    assert "judged on the first 6 seeds of each variant" in v.note
    assert looked(3).comparisons[0].looks.keys() == {3} and "look" not in looked(3).note
