"""Claim verdicts on synthetic lookups, the seed statistics' wording, and the time budget on synthetic curves."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from analysis import stats
from analysis.claims import ANSWERED, NOT_REPRODUCED, NOT_RUN, REPRODUCED, WITHIN_NOISE, fmt, judge
from analysis.store import ExerciseRuns
from lm.exercises import Claim, Exercise, NotRun, load_all

NUMBERS = {("base", "val_loss"): 1.75, ("base", "n_params"): 112193.0, ("base", "probe_top1_p"): 0.65,
           ("nopos", "val_loss"): 1.98, ("base", "probe_top1"): "e", ("a", "score"): 2.0, ("b", "score"): 1.0}
HISTORY = {("base", "val_loss", 500): 2.1}


def lookup(variant, key, step):
    found = NUMBERS.get((variant, key)) if step is None else HISTORY.get((variant, key, step))
    if found is None:
        raise NotRun(f"{variant}.{key}" + (f"[{step}]" if step is not None else "") + " was not run")
    return found


@pytest.mark.parametrize("check, verdict", [
    ("nopos.val_loss > base.val_loss", REPRODUCED),
    ("nopos.val_loss < base.val_loss", NOT_REPRODUCED),
    ("abs(base.val_loss[500] - 2.090) <= 0.06", REPRODUCED),
    ("abs(base.val_loss[1000] - 1.938) <= 0.06", NOT_RUN),      # a step that was never logged
    ("h1.val_loss > h4.val_loss", NOT_RUN),                     # variants that were never run
    ("base.probe_top1 == 'e'", REPRODUCED),                     # a tag
    ("base.probe_top1 == 'r'", NOT_REPRODUCED),
    ("base.n_params == 112193 and missing.val_loss < 2", NOT_RUN),
])
def test_verdicts(check, verdict):
    v = judge(Claim(text="t", check=check), lookup)
    assert v.verdict == verdict
    if verdict == NOT_RUN:
        assert "was not run" in v.note
    if verdict == NOT_REPRODUCED:
        assert v.note == f"check: {check}"


def test_ours_is_shown_as_the_lessons_give_it():
    assert judge(Claim(text="t", ours="base.n_params", check="base.n_params == 112193"), lookup).ours == "112,193"
    assert judge(Claim(text="t", ours="base.probe_top1_p"), lookup).ours == "65%"
    assert judge(Claim(text="t", ours="[nopos.val_loss, base.val_loss]"), lookup).ours == "1.980, 1.750"
    assert judge(Claim(text="t", ours="base.val_loss[500]"), lookup).ours == "2.100"
    assert judge(Claim(text="t", ours="h1.val_loss"), lookup).ours == "-"
    assert fmt([0.5, 0.25], percent=True) == "50%, 25%" and fmt("e") == "'e'" and fmt(4.0) == "4.000"


def test_a_question_is_answered_by_the_best_variant():
    ask = Claim(text="which?", answer="score", best="min")
    v = judge(ask, lookup, ["a", "b", "c"])
    assert (v.verdict, v.ours, v.note) == (ANSWERED, "b (score 1.000)", "not run: c")
    assert judge(Claim(text="which?", answer="score", best="max"), lookup, ["a", "b"]).ours == "a (score 2.000)"
    assert judge(ask, lookup, ["c", "d"]).verdict == NOT_RUN


def test_every_claim_in_the_exercises_can_be_judged_on_an_empty_store():
    def nothing(variant, key, step):
        raise NotRun(f"{variant} was not run")

    for ex in load_all().values():
        for c in ex.claims:
            assert judge(c, nothing, list(ex.variants)).verdict == NOT_RUN, c.text


# --- seeds -----------------------------------------------------------------------------------------------
def test_one_seed_has_no_interval():
    d = stats.welch([1.80], [1.75, 1.76, 1.74])
    assert d.diff == pytest.approx(0.05) and d.low is None
    assert stats.reading(d, "h1") == "one seed: no interval"
    assert stats.interval(d) == "+0.050"


def test_an_interval_that_holds_zero_cannot_tell():
    d = stats.welch([1.80, 1.70, 1.78], [1.75, 1.76, 1.74])
    assert d.low < 0 < d.high
    assert stats.reading(d, "h1") == "the seeds cannot tell these apart"


def test_welch_interval_matches_the_formula():
    a, b = [1.90, 1.92, 1.91], [1.75, 1.78, 1.74, 1.76]
    d = stats.welch(a, b)
    va, vb = np.var(a, ddof=1) / 3, np.var(b, ddof=1) / 4
    df = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 3)
    half = scipy_stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    assert (d.low, d.high) == pytest.approx((np.mean(a) - np.mean(b) - half, np.mean(a) - np.mean(b) + half))
    assert d.low > 0 and stats.reading(d, "h1") == "h1 is higher"
    assert stats.reading(stats.welch(b, a), "h4") == "h4 is lower"
    assert stats.interval(d) == f"+{d.diff:.3f} (+{d.low:.3f} to +{d.high:.3f})"
    # Identical seeds on both sides: the difference is exact.
    same = stats.welch([2.0, 2.0], [1.5, 1.5])
    assert (same.low, same.high) == (0.5, 0.5) and stats.reading(same, "x") == "x is higher"


def test_mean_std():
    assert stats.mean_std([]) == "-"
    assert stats.mean_std([1.23456]) == "1.235"
    assert stats.mean_std([1.0, 2.0, 3.0]) == "2.000 ± 1.000"


def test_at_time():
    assert stats.at_time([0, 10, 20], [4.0, 3.0, 2.0], 15) == (2.5, True)
    assert stats.at_time([0, 10, 20], [4.0, 3.0, 2.0], 25) == (2.0, False)   # never got there: its last point


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
         ("h2", "val_loss"): [1.90, 1.91, 1.905], ("one", "val_loss"): [1.96]}


def seed_lookup(variant, key, step):
    if (variant, key) not in SEEDS:
        raise NotRun(f"{variant}.{key} was not run")
    return float(np.mean(SEEDS[variant, key]))


@pytest.mark.parametrize("check, verdict, note", [
    ("h2.val_loss < h4.val_loss", REPRODUCED, ""),                        # far apart against the seeds' spread
    ("h4.val_loss < h1.val_loss", WITHIN_NOISE, "h4 − h1: -0.005 (-0."),  # the means agree, the seeds cannot tell
    ("h1.val_loss < h4.val_loss", WITHIN_NOISE, "h1 − h4: +0.005"),       # a failed order in the noise, too
    ("h4.val_loss < h2.val_loss", NOT_REPRODUCED, "check: "),             # clearly the other way
    ("h2.val_loss < h4.val_loss < h1.val_loss", WITHIN_NOISE, "h4 − h1"), # a chain: its weakest link
    ("h2.val_loss < one.val_loss", REPRODUCED, "one seed: no interval"),
    ("h2.val_loss < h4.val_loss - 0.01", REPRODUCED, ""),                 # arithmetic: the means only
])
def test_an_order_between_variants_is_read_against_the_seeds(check, verdict, note):
    v = judge(Claim(text="t", check=check), seed_lookup, seeds=lambda variant, key: SEEDS[variant, key])
    assert v.verdict == verdict and v.note.startswith(note), v
    assert judge(Claim(text="t", check=check), seed_lookup).verdict in (REPRODUCED, NOT_REPRODUCED)  # without seeds
