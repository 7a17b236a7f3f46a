"""Claim verdicts on synthetic lookups, the seed statistics' wording, and the time budget on synthetic curves."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from analysis import planning
from analysis.report import numbers
from analysis.report import verdict_text as text
from analysis.store_reading.reader import ExerciseRuns, at_time
from analysis.verdicts import decision, stats
from analysis.verdicts.claims import (
    FINDING,
    INDICATIVE,
    NOT_REPRODUCED,
    NOT_RUN,
    REPRODUCED,
    WITHIN_NOISE,
    Shown,
)
from analysis.verdicts.claim_kinds import judge
from lm.settings.claims import Claim, Source
from lm.settings.exercises import Exercise, NotRun, load_all

# the first look's interval, where a verdict firm there shows it
FIRST_LOOK = numbers.percent(1 - decision.ALPHA * decision.SPEND[0])

NUMBERS = {("base", "val_loss"): 1.75, ("base", "n_params"): 112193.0, ("base", "probe_top1_p"): 0.65,
           ("nopos", "val_loss"): 1.98, ("base", "probe_top1"): "e", ("a", "score"): 2.0, ("b", "score"): 1.0}
HISTORY = {("base", "val_loss", 500): 2.1}


def lookup(variant, key, step):
    found = NUMBERS.get((variant, key)) if step is None else HISTORY.get((variant, key, step))
    if found is None:
        raise NotRun(f"{variant}.{key}" + (f"[{step}]" if step is not None else "") + " was not run")
    return found


@pytest.mark.parametrize("check, verdict", [
    ("nopos.val_loss > base.val_loss", INDICATIVE),
    ("nopos.val_loss < base.val_loss", INDICATIVE),
    ("abs(base.val_loss[500] - 2.090) <= 0.06", INDICATIVE),
    ("abs(base.val_loss[1000] - 1.938) <= 0.06", NOT_RUN),      # a step that was never logged
    ("h1.val_loss > h4.val_loss", NOT_RUN),                     # variants that were never run
    ("base.probe_top1 == 'e'", INDICATIVE),                     # a tag
    ("base.n_params == 112193 and missing.val_loss < 2", NOT_RUN),
])
def test_on_the_means_alone_a_check_is_indicative_never_firm_and_a_missing_number_is_not_run(check, verdict):
    """Issue 33: a comparison with no per-seed values has no test, so no place in the family: it was firm on the
    means."""
    v = judge(Claim(text="t", check=check), lookup)
    assert v.verdict == verdict
    if verdict == NOT_RUN:
        assert "was not run" in text.note(v)
    if verdict == INDICATIVE:
        assert text.label(v) == "indicative (means only)" and "means only, no per-seed values" in text.note(v)


def test_ours_is_the_expressions_value_and_the_report_writes_it_as_the_lessons_give_it():
    def said(claim):
        return numbers.ours(judge(claim, lookup).ours)
    shared = judge(Claim(text="t", ours="base.probe_top1_p"), lookup).ours
    assert shared == Shown(0.65, percent=True)                 # numbers from the engine, words from the report
    assert said(Claim(text="t", ours="base.n_params", check="base.n_params == 112193")) == "112,193"
    assert said(Claim(text="t", ours="base.probe_top1_p")) == "65%"
    assert said(Claim(text="t", ours="[nopos.val_loss, base.val_loss]")) == "1.980, 1.750"
    assert said(Claim(text="t", ours="base.val_loss[500]")) == "2.100"
    assert said(Claim(text="t", ours="h1.val_loss")) == "-"
    assert numbers.fmt([0.5, 0.25], percent=True) == "50%, 25%" and numbers.fmt("e") == "'e'"
    assert numbers.fmt(4.0) == "4.000"


def test_a_question_is_answered_by_the_best_variant():
    ask = Claim(text="which?", answer="score", best="min")
    v = judge(ask, lookup, ["a", "b", "c"])
    assert (v.verdict, numbers.ours(v.ours), text.note(v)) == (FINDING, "b (score 1.000)", "not run: c")
    seeds = {("a", "score"): [2.0, 2.1, 1.95], ("b", "score"): [1.0, 1.2, 1.1]}
    v = judge(ask, mean_lookup(seeds), ["a", "b"], seeds=per_seed(seeds))
    assert text.label(v) == "finding: b.score is lower than a.score"
    assert "95% interval, unadjusted, descriptive" in text.note(v)
    assert numbers.ours(judge(Claim(text="which?", answer="score", best="max"), lookup, ["a", "b"]).ours) == \
        "a (score 2.000)"
    assert judge(ask, lookup, ["c", "d"]).verdict == NOT_RUN


def test_every_claim_in_the_exercises_can_be_judged_on_an_empty_store():
    def nothing(variant, key, step):
        raise NotRun(f"{variant} was not run")

    for ex in load_all().values():
        for c in ex.claims:
            ran = c.check or c.answer or c.value is not None or c.control
            assert judge(c, nothing, list(ex.variants)).verdict == (NOT_RUN if ran else ""), c.text


# --- seeds -----------------------------------------------------------------------------------------------
def test_one_seed_has_no_interval():
    d = stats.welch([1.80], [1.75, 1.76, 1.74])
    assert d.diff == pytest.approx(0.05) and d.low is None
    assert numbers.reading(d, "h1") == "one seed: no interval"
    assert numbers.interval(d) == "+0.050"


def test_an_interval_that_holds_zero_cannot_tell():
    d = stats.welch([1.80, 1.70, 1.78], [1.75, 1.76, 1.74])
    assert d.low < 0 < d.high
    assert numbers.reading(d, "h1") == "the seeds cannot tell these apart"


def test_welch_interval_matches_the_formula():
    a, b = [1.90, 1.92, 1.91], [1.75, 1.78, 1.74, 1.76]
    d = stats.welch(a, b)
    va, vb = np.var(a, ddof=1) / 3, np.var(b, ddof=1) / 4
    df = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 3)
    half = scipy_stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    assert (d.low, d.high) == pytest.approx((np.mean(a) - np.mean(b) - half, np.mean(a) - np.mean(b) + half))
    assert d.low > 0 and numbers.reading(d, "h1") == "h1 is higher"
    assert numbers.reading(stats.welch(b, a), "h4") == "h4 is lower"
    assert numbers.interval(d) == f"+{d.diff:.3f} (+{d.low:.3f} to +{d.high:.3f})"
    # Identical seeds on both sides: no spread for a t-test, the exact test of their separation (2 / C(4, 2)).
    same = stats.welch([2.0, 2.0], [1.5, 1.5])
    assert same.method == stats.SEPARATION and same.low is None and same.p == pytest.approx(1 / 3)
    assert numbers.reading(same, "x") == "x is higher"


def test_mean_std():
    assert numbers.mean_std([]) == "-"
    assert numbers.mean_std([1.23456]) == "1.235"
    assert numbers.mean_std([1.0, 2.0, 3.0]) == "2.000 ± 1.000"


def test_at_time():
    assert at_time([0, 10, 20], [4.0, 3.0, 2.0], 15) == (2.5, True)
    assert at_time([0, 10, 20], [4.0, 3.0, 2.0], 25) == (2.0, False)   # never got there: its last point


# --- the time budget on synthetic runs ----------------------------------------------------------------------
class FakeReader:
    """Two variants, two seeds: `slow` takes twice as long a step as `base`."""

    def __init__(self):
        rows, self.curves = [], {}
        for variant, secs_per_step in (("base", 0.1), ("slow", 0.2)):
            for seed in (1, 2):
                run_id = f"{variant}{seed}"
                steps = np.arange(0, 1001, 100)
                loss = 4.0 - steps / 1000 * (1.5 if variant == "slow" else 1.0) + 0.01 * seed
                self.curves[run_id, "val_loss"] = pd.DataFrame({"step": steps, "value": loss})
                self.curves[run_id, "train_time_s"] = pd.DataFrame({"step": steps[1:],
                                                                    "value": steps[1:] * secs_per_step})
                rows.append({"run_id": run_id, "status": "FINISHED", "start_time": pd.Timestamp(seed, unit="s"),
                             "tags.variant": variant, "tags.seed": str(seed), "metrics.val_loss": loss[-1],
                             "metrics.train_time_s": 1000 * secs_per_step})
        rows.append({**rows[0], "run_id": "old", "start_time": pd.Timestamp(0, unit="s"), "metrics.val_loss": 9.0})
        self.df = pd.DataFrame(rows)

    def runs(self, experiment):
        return self.df

    def history(self, run_id, key):
        return self.curves.get((run_id, key), pd.DataFrame(columns=["step", "value"]))


def test_loss_at_the_budget():
    ex = Exercise(name="scaling", title="", lesson="", measures="", variants={"base": [], "slow": ["x=1"]},
                  budget="base")
    er = ExerciseRuns(ex, "scaling", FakeReader())
    assert er.variants == ["base", "slow"] and len(er.finished) == 4   # the older run of base/seed1 is left out
    assert er.lookup("base", "val_loss") == pytest.approx(3.015)
    table = er.budget()
    assert table.loc["base", "budget_s"] == pytest.approx(100.0)
    assert table.loc["base", "val_loss_at_budget"] == pytest.approx(3.015)
    # In base's 100 s the slow variant gets 500 steps: 4.015 - 0.75.
    assert table.loc["slow", "step_at_budget"] == pytest.approx(500)
    assert er.lookup("slow", "val_loss_at_budget") == pytest.approx(3.265)
    assert table["reached"].all()
    with pytest.raises(NotRun):
        er.lookup("fast", "val_loss")
    with pytest.raises(NotRun):
        er.lookup("base", "val_loss", 50)
    assert er.lookup("slow", "val_loss", 200) == pytest.approx(3.715)


SEEDS = {("h4", "val_loss"): [1.93, 1.94, 1.935], ("h1", "val_loss"): [1.95, 1.93, 1.94],
         ("h2", "val_loss"): [1.90, 1.912, 1.903], ("one", "val_loss"): [1.96]}


def per_seed(table):
    """A claims' per-seed lookup over {(variant, key) or (variant, key, step): [value of seed 1, 2, …]}."""
    def seeds(variant, key, step=None):
        values = table.get((variant, key) if step is None else (variant, key, step))
        return dict(enumerate(values, start=1)) if values else None
    return seeds


def mean_lookup(table):
    def lookup(variant, key, step=None):
        values = table.get((variant, key) if step is None else (variant, key, step))
        if not values:
            raise NotRun(f"{variant}.{key} was not run")
        return float(np.mean(values))
    return lookup


def judged(check, table, **kw):
    return judge(Claim(text="t", check=check), mean_lookup(table), seeds=per_seed(table), **kw)


@pytest.mark.parametrize("check, verdict, note", [
    ("h2.val_loss < h4.val_loss", REPRODUCED, ""),                        # far apart against the seeds' spread
    ("h4.val_loss < h1.val_loss", WITHIN_NOISE, "h4.val_loss < h1.val_loss: the means hold, but"),
    ("h1.val_loss < h4.val_loss", WITHIN_NOISE, "h1.val_loss < h4.val_loss: the means fail, but"),
    ("h4.val_loss < h2.val_loss", NOT_REPRODUCED,
     f"h4.val_loss < h2.val_loss: the {FIRST_LOOK} interval lies on the wrong"),
    ("h2.val_loss < h4.val_loss < h1.val_loss", WITHIN_NOISE, "h4.val_loss < h1.val_loss"),  # every pair counts
    ("h2.val_loss < one.val_loss", INDICATIVE, "the variants compared have different numbers of seeds"),
])
def test_an_order_between_variants_is_read_against_the_seeds(check, verdict, note):
    v = judged(check, SEEDS)
    assert v.verdict == verdict and text.note(v).startswith(note), v
    assert judge(Claim(text="t", check=check), mean_lookup(SEEDS)).verdict == INDICATIVE   # the means alone


def test_one_seed_is_indicative_never_a_verdict():
    """Defect 4 of issue 23: one seed read its means as `reproduced` or `not reproduced`."""
    one = {("a", "x"): [1.0], ("b", "x"): [2.0]}
    for check in ("a.x < b.x", "b.x < a.x", "a.x < 1.5", "a.x == 1.0"):
        v = judged(check, one)
        assert v.verdict == INDICATIVE and text.label(v) == "indicative (1 seed)", (check, v)
    assert text.label(judged("a.x < b.x", {("a", "x"): [1.0, 1.01], ("b", "x"): [2.0, 2.02]})) == "indicative (2 seeds)"


# --- defect 1: a chain is reproduced only if every pair holds ----------------------------------------------
CHAIN = {("t05", "wv"): [0.80, 0.70, 0.75], ("t10", "wv"): [0.72, 0.78, 0.74],   # t05 − t10 noisy
         ("t15", "wv"): [0.90, 0.91, 0.92]}                                      # t10 − t15 clearly reversed


def test_a_chain_with_one_reversed_pair_is_not_reproduced():
    v = judged("t05.wv > t10.wv > t15.wv", CHAIN)
    assert v.verdict == NOT_REPRODUCED
    assert [c.verdict for c in v.comparisons] == [WITHIN_NOISE, NOT_REPRODUCED]
    assert f"t10.wv > t15.wv: the {FIRST_LOOK} interval lies on the wrong side of zero" in text.note(v)


def test_a_chain_with_a_noisy_pair_and_a_clear_one_is_within_seed_noise():
    table = {**CHAIN, ("t15", "wv"): [0.50, 0.51, 0.52]}
    v = judged("t05.wv > t10.wv > t15.wv", table)
    assert v.verdict == WITHIN_NOISE and [c.verdict for c in v.comparisons] == [WITHIN_NOISE, REPRODUCED]
    table = {**table, ("t05", "wv"): [0.90, 0.91, 0.92]}
    assert judged("t05.wv > t10.wv > t15.wv", table).verdict == REPRODUCED


# --- defect 2: margins, thresholds and subscripted values get an interval ------------------------------------
NOMASK = {("nomask", "val_loss"): [1.20, 1.25, 1.22], ("masked", "val_loss"): [2.00, 2.02, 2.01],
          ("near", "val_loss"): [1.30, 1.70, 1.45]}


@pytest.mark.parametrize("check, verdict", [
    ("nomask.val_loss < masked.val_loss - 0.5", REPRODUCED),      # margin 0.29 against a spread of 0.02
    ("nomask.val_loss < masked.val_loss - 0.9", NOT_REPRODUCED),  # margin -0.11, clearly below zero
    ("near.val_loss < masked.val_loss - 0.5", WITHIN_NOISE),      # the means hold, the seeds cannot tell
])
def test_a_margin_is_read_against_the_seeds(check, verdict):
    v = judged(check, NOMASK)
    assert v.verdict == verdict and text.method(v) == stats.PAIRED
    margins = np.array(NOMASK[("masked", "val_loss")]) - 0.5 - np.array(NOMASK[(check.split(".")[0], "val_loss")])
    d = v.comparisons[0].difference
    assert d.diff == pytest.approx(margins.mean() - (0.4 if "0.9" in check else 0))


HEADS = {("base", "share"): [0.96, 0.97, 0.98], ("low", "share"): [0.70, 0.72, 0.71],
         ("wide", "share"): [0.99, 0.80, 0.95]}


@pytest.mark.parametrize("check, verdict", [
    ("base.share >= 0.9", REPRODUCED),
    ("low.share >= 0.9", NOT_REPRODUCED),
    ("wide.share >= 0.9", WITHIN_NOISE),          # mean 0.913 ≥ 0.9, but the interval reaches well below
])
def test_a_threshold_is_read_against_the_seeds(check, verdict):
    v = judged(check, HEADS)
    assert v.verdict == verdict and text.method(v) == stats.ONE_SAMPLE
    x = np.array(HEADS[(check.split(".")[0], "share")])
    ci = scipy_stats.ttest_1samp(x, 0.9).confidence_interval(0.95)   # of the mean; the margin is mean − 0.9
    d = v.comparisons[0].difference
    assert (d.low, d.high) == pytest.approx((ci.low - 0.9, ci.high - 0.9))
    assert (stats.one_sample(x, 0.9).low, stats.one_sample(x, 0.9).high) == pytest.approx((d.low, d.high))


def test_a_two_sided_tolerance_is_read_on_both_sides():
    table = {("base", "val_loss", 3000): [1.80, 1.81, 1.79]}
    assert judged("1.705 <= base.val_loss[3000] <= 1.872", table).verdict == REPRODUCED
    better = {("base", "val_loss", 3000): [1.60, 1.61, 1.62]}   # a better model is not the lesson's number
    v = judged("1.705 <= base.val_loss[3000] <= 1.872", better)
    assert v.verdict == NOT_REPRODUCED and [c.verdict for c in v.comparisons] == [NOT_REPRODUCED, REPRODUCED]


CONTEXT = {("ctx64", "lp", 63): [1.50, 1.52, 1.51], ("ctx16", "lp", 15): [1.80, 1.83, 1.81],
           ("ctx128", "lp", 127): [1.52, 1.45, 1.49]}


@pytest.mark.parametrize("check, verdict", [
    ("ctx64.lp[63] < ctx16.lp[15]", REPRODUCED),
    ("ctx16.lp[15] < ctx64.lp[63]", NOT_REPRODUCED),
    ("ctx128.lp[127] < ctx64.lp[63]", WITHIN_NOISE),
])
def test_a_subscripted_value_is_read_against_the_seeds(check, verdict):
    v = judged(check, CONTEXT)
    assert v.verdict == verdict and text.method(v) == stats.PAIRED and text.seeds(v) == "3"


# --- defect 3: paired where the seeds pair, Welch where they do not ------------------------------------------
A, B = [1.90, 1.95, 1.99, 1.93], [1.88, 1.94, 1.97, 1.92]   # the seeds move together: pairing removes that


def test_runs_that_pair_by_seed_get_the_paired_interval():
    v = judged("a.x > b.x", {("a", "x"): A, ("b", "x"): B})
    d = v.comparisons[0].difference
    ci = scipy_stats.ttest_rel(A, B).confidence_interval(0.95)
    assert (d.low, d.high) == pytest.approx((ci.low, ci.high)) and d.method == stats.PAIRED
    assert v.verdict == REPRODUCED and text.method(v) == stats.PAIRED
    assert stats.welch(A, B).low < 0 < stats.welch(A, B).high   # unpaired, the same numbers cannot tell


def test_runs_with_different_seeds_get_welch():
    table = {("a", "x"): A, ("b", "x"): B[:3]}
    v = judged("a.x > b.x", table)
    d = v.comparisons[0].difference
    ci = scipy_stats.ttest_ind(A, B[:3], equal_var=False).confidence_interval(0.95)
    assert (d.low, d.high) == pytest.approx((ci.low, ci.high)) and text.method(v) == stats.WELCH
    assert text.seeds(v) == "a 4, b 3" and "different numbers of seeds (a 4, b 3)" in text.note(v)
    # with the margin on the other side: b.x < a.x is the same interval
    w = judged("b.x < a.x", table).comparisons[0].difference
    assert (w.low, w.high) == pytest.approx((ci.low, ci.high))


def test_paired_and_welch_match_scipy():
    a, b = [2.1, 2.4, 2.2, 2.6, 2.3], [2.0, 2.1, 2.25, 2.2, 2.0]
    ci = scipy_stats.ttest_rel(a, b).confidence_interval(0.95)
    assert (stats.paired(a, b).low, stats.paired(a, b).high) == pytest.approx((ci.low, ci.high))
    ci = scipy_stats.ttest_ind(a, b[:4], equal_var=False).confidence_interval(0.95)
    assert (stats.welch(a, b[:4]).low, stats.welch(a, b[:4]).high) == pytest.approx((ci.low, ci.high))
    with pytest.raises(ValueError, match="one per seed"):
        stats.paired(a, b[:4])


def test_a_number_with_no_per_seed_form_is_read_on_the_means_and_is_indicative():
    table = {("a", "x"): A}
    lookup = mean_lookup(table)
    v = judge(Claim(text="t", check="a.x > 1.0 and a.tag == 'e'"),
              lambda variant, key, step: "e" if key == "tag" else lookup(variant, key, step), seeds=per_seed(table))
    assert [c.verdict for c in v.comparisons] == [REPRODUCED, INDICATIVE]
    assert v.verdict == INDICATIVE and text.method(v) == f"{stats.ONE_SAMPLE}, means only"


# --- defect 9: undecided is not the end ----------------------------------------------------------------------
def test_within_seed_noise_says_how_many_seeds_would_give_80_percent_power_at_the_level_its_next_look_needs():
    """Issue 33: the note planned at 5% while `make decide` plans at the level its next look spends (10 against 27
    seeds for a difference of 1 sd)."""
    v = judged("x.v < y.v", {("x", "v"): [1.00, 1.05, 1.02], ("y", "v"): [1.03, 1.04, 1.06]})
    d = v.comparisons[0].difference
    level = decision.ALPHA * decision.SPEND[1]      # judged alone: the second look's share of the whole level
    n = planning.seeds_needed(d, level)
    assert n is not None and n > 3 and n > planning.seeds_needed(d, decision.ALPHA)
    assert f"about {n} seeds per variant would give 80% power at the level its next look needs (p < " \
           f"{level:.2g})" in text.note(v) and "make decide" in text.note(v)
    # Issue 23, defect 3: the old figure was the n at which the interval only just excludes zero (50% power).
    # The power of a paired t at n seeds, from the noncentral t: at least 80% at n, less at n - 1.
    def power(k):
        crit = scipy_stats.t.ppf(1 - level / 2, k - 1)
        nc = abs(d.diff) / d.sd * math.sqrt(k)
        return scipy_stats.nct.sf(crit, k - 1, nc) + scipy_stats.nct.cdf(-crit, k - 1, nc)
    assert power(n) >= 0.8 > power(n - 1)


def test_the_power_the_seeds_are_planned_with_is_statsmodels():
    from statsmodels.stats import power as solvers
    n = np.arange(2, 30)
    for effect, level in ((0.5, 0.05), (1.3, 0.0042), (3.0, 1e-4)):
        for ours, theirs in ((planning.t_power(effect, n, level), solvers.TTestPower().power(effect, n, level)),
                             (planning.t_power(effect, n, level, True), solvers.TTestIndPower().power(effect, n, level))):
            seen = np.isfinite(theirs)   # statsmodels' is NaN where scipy's wrong-way tail is (planning.t_power)
            assert ours[seen] == pytest.approx(theirs[seen], abs=1e-9) and np.isfinite(ours).all()


def test_added_seeds_count_in_the_verdict():
    few = {("a", "x"): A[:2], ("b", "x"): [1.97, 1.93]}
    assert judged("a.x < b.x", few).verdict == INDICATIVE
    more = {("a", "x"): [1.90, 1.91, 1.92, 1.90, 1.91], ("b", "x"): [1.97, 1.93, 1.96, 1.95, 1.94]}
    assert judged("a.x < b.x", more).verdict == REPRODUCED


# --- every verdict path for every kind of check --------------------------------------------------------------
PATHS = {("a", "x"): [1.0, 1.1, 1.2], ("b", "x"): [2.0, 2.12, 2.21], ("c", "x"): [1.05, 1.5, 0.9],
         ("a", "p", 7): [1.0, 1.1, 1.2], ("b", "p", 7): [2.0, 2.12, 2.21], ("c", "p", 7): [1.05, 1.5, 0.9],
         ("u", "x"): [2.0, 2.1, 2.2, 2.05], ("w", "x"): [1.05, 1.5, 0.9, 1.2]}


@pytest.mark.parametrize("kind, checks, method", [
    ("chain", ("b.x > a.x > 0.5", "a.x > b.x > 0.5", "b.x > c.x > 0.5", "b.x > zz.x > 0.5"), stats.PAIRED),
    ("margin", ("a.x < b.x - 0.5", "a.x < b.x - 1.5", "c.x < a.x + 0.2", "a.x < zz.x - 0.5"), stats.PAIRED),
    ("threshold", ("b.x >= 1.5", "a.x >= 1.5", "c.x >= 1.1", "zz.x >= 1.5"), stats.ONE_SAMPLE),
    ("subscripted", ("a.p[7] < b.p[7]", "b.p[7] < a.p[7]", "c.p[7] < a.p[7] + 0.2", "a.p[8] < b.p[7]"), stats.PAIRED),
    ("unpaired", ("a.x < u.x", "u.x < a.x", "w.x < a.x + 0.2", "zz.x < u.x"), stats.WELCH),
])
def test_every_kind_of_check_reaches_every_verdict(kind, checks, method):
    reproduced, reversed_, noisy, missing = checks
    assert judged(reproduced, PATHS).verdict == REPRODUCED
    assert judged(reversed_, PATHS).verdict == NOT_REPRODUCED
    assert judged(noisy, PATHS).verdict == WITHIN_NOISE
    assert judged(missing, PATHS).verdict == NOT_RUN
    assert method in text.method(judged(reproduced, PATHS))


# --- the exercises' own claims where the lesson puts them ----------------------------------------------------
def claim(exercise: str, starts: str) -> Claim:
    return next(c for c in load_all()[exercise].claims if c.text.startswith(starts))


def test_a_better_model_than_the_lessons_is_not_its_number():
    """1.761 is judged two-sided, as one draw: a model far better than the lesson's is not its number; seeds tight
    about it reproduce it; seeds that spread as widely as the claim's delta can say neither."""
    c = claim("baseline", "Validation loss after 3,000")
    assert c.value == 1.761 and c.check is None and c.delta == pytest.approx(math.log(math.exp(1.761) + 0.5) - 1.761,
                                                                             abs=1e-4)
    for values, verdict in (([1.7605, 1.7610, 1.7615], REPRODUCED), ([1.70, 1.76, 1.82], WITHIN_NOISE),
                            ([1.60, 1.61, 1.59], NOT_REPRODUCED)):
        table = {("base", "val_loss", 3000): values}
        assert judge(c, mean_lookup(table), seeds=per_seed(table)).verdict == verdict, values
    assert not any("val_perplexity" in (c.check or c.ours or "") for c in load_all()["baseline"].claims)


def single(value: float, values: list[float], delta: float):
    """A value claim on `values`, judged alone."""
    table = {("base", "x"): values}
    return judge(Claim(text="t", ours="base.x", value=value, delta=delta), mean_lookup(table), seeds=per_seed(table))


def test_a_lessons_single_number_is_reproduced_by_the_equivalence_and_not_reproduced_outside_the_prediction_interval():
    """D = our mean - the lesson's number on the standard error of one more run, s·√(1 + 1/n), t on n - 1: "not
    reproduced" is the two-sided test of D = 0, "reproduced" the two one-sided tests of |D| >= delta (scipy's t), the
    comparison carrying the smaller p and the verdict it is for (a number both unlike ours and within delta of it is
    reproduced: both verdicts are true there); judged alone at the first look's share."""
    values = [1.7490, 1.7500, 1.7510]          # mean 1.75, s 0.001
    se = 0.001 * math.sqrt(4 / 3)
    level = decision.ALPHA * decision.SPEND[0]
    for value, delta, verdict in ((1.7505, 0.01, REPRODUCED), (1.7505, 0.003, WITHIN_NOISE),
                                  (1.7600, 0.05, REPRODUCED), (1.7600, 0.003, NOT_REPRODUCED)):
        v = single(value, values, delta)
        c = v.comparisons[0]
        D = 1.75 - value
        differs = 2 * scipy_stats.t.sf(abs(D) / se, 2)
        within = max(scipy_stats.t.cdf((D - delta) / se, 2), scipy_stats.t.sf((D + delta) / se, 2))
        assert c.raw_p == pytest.approx(min(differs, within))
        assert c.difference.direction == (1.0 if within < differs else -1.0)
        assert v.verdict == verdict and (verdict == WITHIN_NOISE) == (min(differs, within) / decision.SPEND[0] >=
                                                                       decision.ALPHA), (value, delta)
    # the interval shown is our prediction interval for one more run at the level the verdict uses
    half = scipy_stats.t.ppf(1 - level / 2, 2) * se
    assert text.interval(single(1.7505, values, 0.01)) == \
        f"1.750 ({1.75 - half:.3f} to {1.75 + half:.3f} at {FIRST_LOOK}; the lesson's 1.750, delta 0.01)"
    assert "failing to reject is not reproducing" in text.note(single(1.7505, values, 0.003))
    one = {("base", "x"): [1.75]}
    alone = judge(Claim(text="t", ours="base.x", value=1.9, delta=0.1), mean_lookup(one), seeds=per_seed(one))
    assert text.label(alone) == "indicative (1 seed)"


@pytest.mark.parametrize("where, wrong", [(0.0, NOT_REPRODUCED), (1.0, REPRODUCED)])
def test_each_single_number_outcome_errs_at_most_at_the_level_and_both_are_reached(where, wrong):
    """Every value claim of the exercise files, at the spreads the calibration draws it with: the lesson's number a
    draw of our own setup (where 0) reads "not reproduced" at most at the level, and reproduced in most draws; our
    setup's mean delta from the lesson's number (where 1) reads "reproduced" at most at the level, and not
    reproduced in most draws. Judged alone at the first look (its share of the level, 2.5%), 400 draws each."""
    from analysis.calibration import boundary
    rng = np.random.default_rng(7)
    ws = [w for w in boundary.worlds(load_all(), at_value=not where)[0] if w.single]
    assert len(ws) >= 20
    right = REPRODUCED if where == 0 else NOT_REPRODUCED
    for w in ws:
        verdicts = []
        for _ in range(400):
            verdicts.append(judged_draw(w, rng))
        assert verdicts.count(wrong) / len(verdicts) <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / 400), (w.claim.text, where)
    # both outcomes reachable on a claim whose spread is small beside its delta: the 1.761
    w = next(w for w in ws if w.claim.value == 1.761)
    got = [judged_draw(w, rng) for _ in range(200)]
    assert got.count(right) / len(got) > 0.5, (where, got.count(right))


def judged_draw(w, rng):
    """A value claim's world (analysis/calibration/boundary.py) drawn once and judged alone on its first 3 seeds."""
    from analysis.calibration import boundary
    d = boundary.draw(w, rng)
    ((k, per),) = d.final.items()
    _, variant, key, step = k
    table = {(variant, key) if step is None else (variant, key, step): [per[s] for s in sorted(per)[:3]]}
    return judge(w.claim, mean_lookup(table), seeds=per_seed(table)).verdict


def test_the_probe_judges_e_by_its_lead_on_each_seed_and_65_percent_as_one_draw():
    """'e' the likeliest, as each seed's lead of 'e' over the likeliest other character (a number, tested over the
    seeds), not as a yes or no per seed, which no count of seeds made firm at the table's level."""
    top = claim("baseline", "After 'To be, or not to b'")
    share = claim("baseline", "…at 65%")
    assert share.value == 0.65 and top.check == "base.probe_lead_e > 0"
    for leads, verdict in (([0.60, 0.62, 0.58], REPRODUCED), ([0.1, -0.1, 0.05], WITHIN_NOISE),
                           ([-0.30, -0.32, -0.31], NOT_REPRODUCED)):
        table = {("base", "probe_lead_e"): leads}
        assert judge(top, mean_lookup(table), seeds=per_seed(table)).verdict == verdict, leads
    for values, verdict in (([0.650, 0.651, 0.649], REPRODUCED), ([0.40, 0.65, 0.90], WITHIN_NOISE),
                            ([0.30, 0.31, 0.29], NOT_REPRODUCED)):
        table = {("base", "probe_top1_p"): values}
        assert judge(share, mean_lookup(table), seeds=per_seed(table)).verdict == verdict, values


def test_a_claim_reads_another_exercises_variant():
    """`baseline:base.key` goes to the lookup as the variant "baseline:base"; two exercises' seeds never pair."""
    table = {("microgpt", "k"): [0.10, 0.12, 0.11], ("baseline:base", "k"): [0.40, 0.42, 0.41]}
    v = judge(Claim(text="t", check="microgpt.k < baseline:base.k"), mean_lookup(table), seeds=per_seed(table))
    assert v.verdict == REPRODUCED and text.method(v) == stats.WELCH
    f = judge(Claim(text="t", check="microgpt.k < baseline:base.k", finding=True), mean_lookup(table),
              seeds=per_seed(table))
    assert f.verdict == FINDING and text.label(f) == "finding: microgpt.k is lower than baseline.base.k"


def test_a_finding_gets_an_interval_and_a_wording_never_a_verdict():
    for check, wording in (("h2.val_loss < h4.val_loss", "h2.val_loss is lower than h4.val_loss"),
                           ("h4.val_loss < h2.val_loss", "h4.val_loss is higher than h2.val_loss"),
                           ("h4.val_loss < h1.val_loss", "h4.val_loss against h1.val_loss: undetermined")):
        v = judge(Claim(text="t", check=check, finding=True), mean_lookup(SEEDS), seeds=per_seed(SEEDS))
        assert v.verdict == FINDING and text.wording(v) == wording and text.interval(v) and not text.p_adjusted(v), v


def test_the_head_claims_read_the_block_the_lesson_names():
    c = claim("baseline", "In block 1, a head reads the previous")
    # block 2 has the perfect previous-token head, block 1 none: the lesson's claim is about block 1
    table = {("base", "heads_offset1_share_max_block1"): [0.30, 0.302, 0.301], ("base", "heads_offset1_share_max_block2"):
             [1.0, 1.0, 1.0], ("base", "heads_offset1_share_max"): [1.0, 1.0, 1.0]}
    assert judge(c, mean_lookup(table), seeds=per_seed(table)).verdict == NOT_REPRODUCED
    assert "block2" in claim("baseline", "A block-2 head finds").check
    content = claim("baseline", "Block 2's heads choose by content")
    table = {("base", "heads_positional_mean_block1"): [0.9, 0.92, 0.91],
             ("base", "heads_positional_mean_block2"): [0.6, 0.65, 0.62]}
    assert judge(content, mean_lookup(table), seeds=per_seed(table)).verdict == REPRODUCED
    view = claim("baseline", "Together, block 1's heads give each position a view")
    # "together": the block's heads taken together (their mean), not each head alone
    assert "heads_last3_mass_mean_block1" in view.check and "heads_last3_mass_min_block1" not in view.check
    # "block 1, heads 2 and 4: spread over the last 3": four sharp 1-back heads (each 100% at 1 back, so 100% of
    # their weight 1-3 back) passed the check above; they count no spread head
    spread = claim("baseline", "Two block-1 heads spread over the last 3")
    sharp = {("base", "heads_last3_spread_sum_block1"): [0.0] * 9, ("base", "heads_last3_mass_mean_block1"): [1.0] * 9}
    assert judge(view, mean_lookup(sharp), seeds=per_seed(sharp)).verdict == REPRODUCED
    assert judge(spread, mean_lookup(sharp), seeds=per_seed(sharp)).verdict == NOT_REPRODUCED
    # Three seeds alike say little about a mean (issue 33): the exact test leaves both open.
    three = {k: v[:3] for k, v in sharp.items()}
    for c, held in ((view, 3), (spread, 0)):
        v = judge(c, mean_lookup(three), seeds=per_seed(three))
        assert v.verdict == WITHIN_NOISE and v.comparisons[0].difference.held == held


def test_the_context_claims_compare_like_with_like():
    """Within one model: the same weights, training and windows, only how far back a prediction reads differs.
    Across models (the 128-character one trained on 8 times the predictions at equal steps) only findings."""
    claims_ = load_all()["context"].claims
    for c in claims_:
        models = {v for v in ("ctx16", "ctx64", "ctx128") if f"{v}." in c.check}
        assert c.finding or len(models) == 1, c.text
        assert ".val_loss " not in c.check.replace("val_loss_at_position", "") + " "
    c = claim("context", "Reading more than 16 characters back helps")
    assert c.check == "ctx128.val_loss_at_position[127] < ctx128.val_loss_at_position[15]"
    table = {("ctx128", "val_loss_at_position", 15): [2.0, 2.02, 2.01],
             ("ctx128", "val_loss_at_position", 127): [2.1, 2.125, 2.105]}   # reading further made it worse
    assert judge(c, mean_lookup(table), seeds=per_seed(table)).verdict == NOT_REPRODUCED


def test_the_score_array_is_predicted_and_measured_on_the_path_that_holds_it():
    """The fused path training uses (SDPA) holds no score array: no claim checks that size (score_array_size). The
    lesson's 524,288 and its "4 times" are predicted from the settings, and measured on the plain attention path,
    which holds the array (score_array_size_math)."""
    claims_ = load_all()["scaling"].claims
    predicted = [c for c in claims_ if c.text.startswith("Predicted")]
    assert [c.lesson for c in predicted] == ["32 windows × 4 heads × 64 × 64 = 524,288", "4 times as many"]
    assert all(c.prediction and not c.check for c in predicted)
    assert not any("score_array_size" in (c.check or "").replace("predicted_score_array_size", "")
                   .replace("score_array_size_math", "") for c in claims_)
    measured = [c for c in claims_ if c.check and "score_array_size_math" in c.check]
    assert len(measured) == 2 and all(c.deterministic for c in measured)
    exact = {("base", "score_array_size_math"): [524288.0] * 3, ("context128", "score_array_size_math"): [2097152.0] * 3}
    assert all(judge(c, mean_lookup(exact), seeds=per_seed(exact)).verdict == REPRODUCED for c in measured)
    tiled = {**exact, ("base", "score_array_size_math"): [0.0] * 3}     # a path that holds no array fails both
    assert all(judge(c, mean_lookup(tiled), seeds=per_seed(tiled)).verdict == NOT_REPRODUCED for c in measured)
    v = judge(predicted[1], lambda v, k, s: 524288.0 * (4 if v == "context128" else 1))
    assert v.verdict == "" and numbers.ours(v.ours) == "4.000" and "no verdict" in text.note(v)


def test_the_store_gives_each_seeds_value_for_the_claims():
    ex = Exercise(name="scaling", title="", lesson="", measures="", variants={"base": [], "slow": ["x=1"]},
                  budget="base")
    er = ExerciseRuns(ex, "scaling", FakeReader())
    assert er.per_seed("base", "val_loss") == pytest.approx({1: 3.01, 2: 3.02})   # the newer run of seed 1
    assert er.per_seed("slow", "val_loss", 200) == pytest.approx({1: 3.71, 2: 3.72})
    assert er.per_seed("base", "val_loss", 50) is None and er.per_seed("fast", "val_loss") is None
    # each seed's own curve at the budget (base's mean time, 100 s): slow's seeds reach step 500 in it
    assert er.per_seed("slow", "val_loss_at_budget") == pytest.approx({1: 3.26, 2: 3.27})
    v = judge(Claim(text="t", check="slow.val_loss < base.val_loss"), er.lookup, seeds=er.per_seed)
    assert text.seeds(v) == "2" and v.verdict == INDICATIVE   # two seeds: no verdict
    assert v.comparisons[0].difference.diff == pytest.approx(0.5)


# --- issue 33: the windows' error, paired ----------------------------------------------------------------------
def windowed(rho: float, seeds=(1, 2, 3), windows: int = 2000, rng=None, offsets=None):
    """Two variants a and b scored on the same windows: each window's loss is the variant's mean, the run's own
    offset (its seed), and a window part of sd 0.3 of which the share rho is the window's own difficulty, shared by
    every run. The per-seed final values (each the mean over the windows) and the per-window values."""
    rng = rng or np.random.default_rng(0)
    offsets = offsets if offsets is not None else {v: rng.normal(0, 0.01, len(seeds)) for v in "ab"}
    shared = rng.normal(0, 1, windows)
    per_window = {}
    for v, mean in (("a", 2.0), ("b", 2.02)):
        per_window[v] = {s: mean + offsets[v][i] + 0.3 * (math.sqrt(rho) * shared + math.sqrt(1 - rho) *
                                                           rng.normal(0, 1, windows)) for i, s in enumerate(seeds)}
    final = {(v, "val_loss"): [float(x.mean()) for x in per_window[v].values()] for v in "ab"}
    return final, per_window, offsets


def test_the_windows_error_of_a_difference_is_paired_window_by_window():
    """Issue 33: every variant is scored on the same windows, so what a window's text costs every model cancels in
    a difference. With a correlation of 0.9 between two runs' per-window losses, the windows' standard error the
    engine adds matches the spread of the difference over fresh draws of the windows; summing each run's own error
    in squares, as before, overstated it (1/√(1 - ρ) = 3.2x for one run against one)."""
    final, per_window, offsets = windowed(0.9)
    check = Claim(text="t", check="b.val_loss > a.val_loss")
    lookups = dict(seeds=per_seed(final), windows=lambda v, k, step=None: per_window[v] if k == "val_loss" else None)
    v = judge(check, mean_lookup(final), **lookups)
    d = v.comparisons[0].difference
    # The windows' error of the seeds' mean difference, over 300 fresh draws of 2,000 windows, the runs' offsets kept.
    rng = np.random.default_rng(1)
    draws = []
    for _ in range(300):
        f, _, _ = windowed(0.9, rng=rng, offsets=offsets)
        draws.append(np.mean(f[("b", "val_loss")]) - np.mean(f[("a", "val_loss")]))
    assert d.se_windows == pytest.approx(np.std(draws, ddof=1), rel=0.12)
    # each run's own error over its windows, summed in squares over the two variants (the old rule)
    own = [float(np.std(x, ddof=1) / math.sqrt(len(x))) for v in "ab" for x in per_window[v].values()]
    summed = math.sqrt(np.mean(own[:3]) ** 2 + np.mean(own[3:]) ** 2)
    assert summed > 3 * d.se_windows
    assert d.se == pytest.approx(math.sqrt(d.se_seeds ** 2 + d.se_windows ** 2))
    assert "se seeds" in text.interval(v) and f"windows {d.se_windows:.3f}" in text.interval(v)


def test_a_window_scored_number_without_per_window_values_says_its_interval_is_for_those_windows():
    key = "val_loss_at_position"
    table = {("ctx64", key, 63): [1.600, 1.610, 1.605], ("ctx64", key, 15): [1.661, 1.668, 1.666]}
    v = judged(f"ctx64.{key}[63] < ctx64.{key}[15]", table)
    assert v.comparisons[0].difference.se_windows is None
    assert f"ctx64.{key}[63], ctx64.{key}[15]: scored on fixed windows, the same for every run, whose per-window " \
           f"values are not logged: the interval is for those windows" in text.note(v)


# --- issue 32: each claim at the lesson's own precision -------------------------------------------------------
# Metrics every run gives alike (computed, not drawn): a band of half a printed unit is exact on them.
EXACT_METRICS = {"uniform_loss", "bigram_loss", "worked_weight_1", "worked_weight_2", "worked_weight_3",
                 "worked_blend_1", "worked_blend_2", "p4_weight_1"}


def test_a_lessons_single_number_is_a_value_claim_never_a_per_seed_band():
    """A per-seed `abs(x - v) < band` tests the seeds' mean absolute deviation, which fails more the more seeds
    there are (18/72/98/100% of draws at 3/6/9/12 seeds with the truth at 43%): the lesson's single numbers are
    `value:` claims, judged as one draw. A band stays only on numbers that are computed, the same on every seed."""
    import re

    for name, ex in load_all().items():
        for c in ex.claims:
            for metric in re.findall(r"abs\(\w+\.(\w+)", c.check or ""):
                assert metric in EXACT_METRICS, f"{name}: {c.text}"
    values = {(name, c.value) for name, ex in load_all().items() for c in ex.claims if c.value is not None}
    assert {("baseline", 0.08), ("baseline", 1.0), ("baseline", 0.94), ("microgpt", 0.43), ("recipe002", 4.371),
            ("recipe002", 1.746), ("recipe002", 1.562), ("recipe002", 2.327)} <= values


def test_the_block_1_heads_are_the_lessons_100_and_94_percent_as_one_draw_each():
    one, two = claim("baseline", "In block 1, a head reads the previous"), claim("baseline", "In block 1, another")
    assert (one.value, two.value) == (1.0, 0.94)
    table = {("base", "heads_offset1_share_max_block1"): [0.92, 0.93, 0.91] * 2}   # the old ≥ 90% passed it
    assert judge(one, mean_lookup(table), seeds=per_seed(table)).verdict == NOT_REPRODUCED
    table = {("base", "heads_offset1_share_max_block1"): [0.90, 1.0, 0.95]}     # 3 seeds as wide as the delta
    assert judge(one, mean_lookup(table), seeds=per_seed(table)).verdict == WITHIN_NOISE
    table = {("base", "heads_offset1_share_max_block1"): [0.998, 1.0, 0.995]}
    assert judge(one, mean_lookup(table), seeds=per_seed(table)).verdict == REPRODUCED


@pytest.mark.parametrize("starts, key, values, verdict", [
    # whole numbers, as the lesson prints them: a spread of 4.7 does not round to 4 (the old factor of 2 passed it)
    ("Without the scaling the scores", "unscaled.init_score_std", [4.70, 4.72, 4.68], NOT_REPRODUCED),
    ("Without the scaling the scores", "unscaled.init_score_std", [4.04, 4.10, 3.98], REPRODUCED),
    ("With it they spread about 1", "scaled.init_score_std", [1.62, 1.60, 1.64], NOT_REPRODUCED),
    ("…whatever d is", "scaled_d64.init_score_std", [1.03, 1.00, 1.06], REPRODUCED),
])
def test_the_spreads_round_to_the_lessons_whole_numbers(starts, key, values, verdict):
    c = claim("sqrtd", starts)
    variant, metric = key.split(".")
    table = {(variant, metric): values}
    assert judge(c, mean_lookup(table), seeds=per_seed(table)).verdict == verdict


def test_the_wider_heads_spread_about_8_and_11():
    c = claim("sqrtd", "Unscaled, wider heads spread more")
    good = {("unscaled_d64", "init_score_std"): [8.2, 8.22, 8.18],
            ("unscaled_d128", "init_score_std"): [11.1, 11.12, 11.08]}
    wide = {**good, ("unscaled_d128", "init_score_std"): [13.0, 13.1, 12.9]}    # the old band reached 22.6
    assert judge(c, mean_lookup(good), seeds=per_seed(good)).verdict == REPRODUCED
    assert judge(c, mean_lookup(wide), seeds=per_seed(wide)).verdict == NOT_REPRODUCED


def test_barely_learns_is_read_on_the_attention_weights_and_the_loss_is_a_finding_of_ours():
    c = claim("sqrtd", "…so the attention weights barely learn")
    assert "heads_attention_change" in c.check and "val_loss" not in c.check
    def moved(unscaled, scaled):
        return {("unscaled", "heads_attention_change"): unscaled, ("scaled", "heads_attention_change"): scaled}

    little = moved([0.10, 0.11, 0.09], [0.40, 0.42, 0.41])
    less = moved([0.30, 0.31, 0.29], [0.40, 0.42, 0.41])                    # less, but not barely
    assert judge(c, mean_lookup(little), seeds=per_seed(little)).verdict == REPRODUCED
    assert judge(c, mean_lookup(less), seeds=per_seed(less)).verdict == NOT_REPRODUCED
    loss = claim("sqrtd", "Finding: the unscaled model against the scaled")
    assert loss.finding and loss.source == Source.OURS


def test_much_sharper_means_sharp_where_microgpt_is_fuzzy_not_heavier_by_a_hair():
    c = claim("microgpt", "Bigger models grow much sharper")
    hair = {("bigger", "heads_max_weight_mean"): [0.46, 0.47, 0.45], ("microgpt", "heads_max_weight_mean"): [0.40] * 3}
    sharp = {**hair, ("bigger", "heads_max_weight_mean"): [0.75, 0.78, 0.76]}
    assert judge(c, mean_lookup(hair), seeds=per_seed(hair)).verdict == NOT_REPRODUCED
    assert judge(c, mean_lookup(sharp), seeds=per_seed(sharp)).verdict == REPRODUCED


def test_verse_lines_lie_where_passages_of_the_text_lie():
    c = claim("baseline", "…and breaks lines like verse")
    band = {("base", "line_length_train_low"): [20.9] * 3, ("base", "line_length_train_high"): [43.4] * 3}
    prose = {**band, ("base", "line_length"): [55.0, 58.0, 60.0]}           # inside the old factor of 2 (≤ 66.2)
    verse = {**band, ("base", "line_length"): [31.0, 33.0, 35.0]}
    assert judge(c, mean_lookup(prose), seeds=per_seed(prose)).verdict == NOT_REPRODUCED
    assert judge(c, mean_lookup(verse), seeds=per_seed(verse)).verdict == REPRODUCED


# --- issue 32: the claims that were not checked at all --------------------------------------------------------
def test_after_500_steps_the_model_beats_the_bigram_table():
    c = claim("baseline", "After 500 steps the model already beats the bigram table")
    table = {("base", "val_loss", 500): [2.09, 2.10, 2.08], ("base", "bigram_loss"): [2.482] * 3}
    assert judge(c, mean_lookup(table), seeds=per_seed(table)).verdict == REPRODUCED
    table[("base", "val_loss", 500)] = [2.60, 2.62, 2.61]
    assert judge(c, mean_lookup(table), seeds=per_seed(table)).verdict == NOT_REPRODUCED


@pytest.mark.parametrize("values, verdict", [
    ([2.47, 2.48, 2.475], REPRODUCED),                 # a perplexity of about 11.9: the table's 12
    ([2.40, 2.41, 2.405], NOT_REPRODUCED),             # about 11.1: better than "about the best" allows
    ([2.60, 2.61, 2.605], REPRODUCED),                 # about 13.5: short of the table, which "the best" allows
])
def test_a_context_1_model_does_no_better_than_about_the_bigram_table(values, verdict):
    c = claim("bigram", "A model that sees only the current character")
    table = {("ctx1", "val_loss"): values}
    assert judge(c, mean_lookup(table), seeds=per_seed(table)).verdict == verdict


def test_the_worked_blend_and_the_gradient_check_read_the_models_own_computations():
    from lm.measures import probes

    blend = claim("microgpt", "The worked blend")
    exact = {("microgpt", k): [v] * 3 for k, v in probes.worked_blend().items()}
    v = judge(blend, mean_lookup(exact), seeds=per_seed(exact))
    assert v.verdict == REPRODUCED and all(c.difference.exact for c in v.comparisons)
    off = {**exact, ("microgpt", "worked_blend_1"): [7.2] * 3}
    assert judge(blend, mean_lookup(off), seeds=per_seed(off)).verdict == NOT_REPRODUCED
    grad = claim("baseline", "A gradient check of the model's masked attention")
    table = {("base", "attention_gradcheck"): [probes.attention_gradcheck()] * 3}
    assert judge(grad, mean_lookup(table), seeds=per_seed(table)).verdict == REPRODUCED
    table = {("base", "attention_gradcheck"): [probes.attention_gradcheck(step=1e-2)] * 3}
    assert judge(grad, mean_lookup(table), seeds=per_seed(table)).verdict == NOT_REPRODUCED


def test_lesson_002s_curve_is_one_draw_at_each_checkpoint_and_its_untrained_loss_one_batch():
    claims_ = load_all()["recipe002"].claims
    curve = {c.ours: c.value for c in claims_ if c.ours and c.ours.startswith("cpu.val_loss[")}
    assert curve == {"cpu.val_loss[250]": 2.327, "cpu.val_loss[500]": 2.111, "cpu.val_loss[750]": 1.986,
                     "cpu.val_loss[1000]": 1.898, "cpu.val_loss[1250]": 1.863, "cpu.val_loss[1500]": 1.820,
                     "cpu.val_loss[1750]": 1.795, "cpu.val_loss[2000]": 1.758, "cpu.val_loss[2250]": 1.756,
                     "cpu.val_loss[2500]": 1.746}
    init = claim("recipe002", "The untrained loss on one training batch")
    assert (init.ours, init.value) == ("cpu.loss_at_init", 4.371)
    close = claim("recipe002", "Before training, the loss is close to log|V|")
    assert "cpu.loss_at_init" in close.check and "val_loss[0]" not in close.check
