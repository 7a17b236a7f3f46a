"""The claims table's error rate, measured through the table itself (analysis/calibration): every claim of the
exercise files set on its boundary, simulated stores judged by analysis.verdicts.table at the first look and through
`make decide`'s looks; and the defects of issue 33 each shown, on the rule that fixes it. A few hundred tables here
(seconds); `make calibrate` runs 10,000 (docs/claims.md)."""
import ast
import csv
import io
import math
import subprocess
import sys

import numpy as np
import pytest

from analysis.calibration import boundary, simulate, spreads
from analysis.verdicts import Numbers, claims, decision, table
from analysis.verdicts.claim_kinds import judge
from analysis.verdicts.claims import NOT_REPRODUCED, REPRODUCED, WITHIN_NOISE
from lm.settings.claims import Claim, ClaimKind
from lm.settings.exercises import Exercise, evaluate, load_all
from tests.conftest import ROOT

LEVEL = decision.ALPHA


def mc(n: int, p: float = LEVEL) -> float:
    """Three Monte Carlo standard errors of a rate p over n draws."""
    return 3 * math.sqrt(p * (1 - p) / n)


def test_every_claim_of_the_exercise_files_can_be_set_on_its_boundary():
    """The simulation reads the files and the claim kinds' registry, never a list of claims: a claim whose form
    leaves no boundary to set it on is named, and fails here."""
    ws, problems = boundary.worlds(load_all())
    assert problems == []
    kinds = {w.kind for w in ws}
    assert {ClaimKind.CHECK, ClaimKind.VALUE, ClaimKind.DETERMINISTIC, ClaimKind.CONTROL} <= kinds
    assert all(w.counted == (w.kind in (ClaimKind.CHECK, ClaimKind.VALUE)) for w in ws)


def exercise(claims: list[Claim], variants=("a", "b")) -> dict[str, Exercise]:
    return {"own": Exercise(name="own", title="own", lesson="-", measures="-", variants={v: [] for v in variants},
                            claims=claims)}


def expected_margins(w: boundary.World, draws: int = 3000) -> list[float]:
    """Each comparison's margin averaged over many draws of the world's numbers, in its margin's sds."""
    rng = np.random.default_rng(4)
    out = []
    ds = [boundary.draw(w, rng) for _ in range(draws)]
    for a, op, b, _ in boundary._pairs(claims.shape(w.claim.check).body, True):
        flip, _ = claims.ORDERS[type(op)]
        values = []
        for d in ds:
            def look(variant, key, step):
                (k,) = [k for k in d.final if k[1:] == (variant.split(":")[-1], key, step)]
                return float(d.final[k][1])
            xa, xb = evaluate(ast.unparse(a), look), evaluate(ast.unparse(b), look)
            values.append(xb - xa if flip else xa - xb)
        out.append(np.mean(values) / np.std(values))
    return out


@pytest.mark.parametrize("check", [
    "a.val_loss > b.val_loss",                                                  # a difference
    "0.5 <= a.ms_per_step / (b.ms_per_step * 3) <= 2",                          # a band on a ratio
    "max(a.heads_offset0_share_max_block1, a.heads_offset1_share_max_block1) > 0.5",   # a maximum
    "a.heads_last3_spread_sum_block1 >= 2",                                     # a count that ties
    "abs(a.val_loss_at_position - 1.7) < 0.05",                                 # a band, read on the mean
])
def test_a_claim_is_set_on_its_boundary_whatever_its_form(check):
    ex = exercise([Claim(text="t", check=check)])
    (w,), problems = boundary.worlds(ex)
    assert problems == []
    margins = expected_margins(w)
    assert abs(margins[0]) < 0.06 and all(m > -0.06 for m in margins)   # the first on it, the others on its true side


@pytest.mark.parametrize("claim, why", [
    (Claim(text="t", check="a.n_params > 5"), "every number it reads is a constant: no comparison of it can be set "
                                              "on its boundary (declare it deterministic)"),
    (Claim(text="t", check="a.probe_top1 == b.probe_top1"), "between one number and a constant"),
    (Claim(text="t", check="a.val_loss < 3", deterministic=True), "declared deterministic, but it reads numbers "
                                                                 "that vary over seeds: a.val_loss"),
    (Claim(text="t", check="a.n_params > 5 or a.val_loss < 2"), "lies on the true side there"),
])
def test_a_claim_that_cannot_be_set_on_its_boundary_is_named_with_why(claim, why):
    _, problems = boundary.worlds(exercise([claim]))
    assert len(problems) == 1 and problems[0].startswith("own claim 1 ('t'): ") and why in problems[0], problems


def test_the_whole_tables_false_discovery_rate_is_at_most_the_level_at_the_first_look_and_with_the_looks():
    """Every claim on its boundary, through the table at the first look and as `make decide` extends it: the false
    share of the firm verdicts, averaged over tables (a lesson's single number, delta from ours, is truly not
    reproduced, so its boundary brings true verdicts beside the false ones)."""
    n = 80
    tally, ws, problems = simulate.run(load_all(), n, seed=11)
    print(f"\n{n} tables of {sum(w.counted for w in ws)} claims on their boundary: false discovery rate "
          f"{tally.fdp_first / n:.2%} at the first look, {tally.fdp_looks / n:.2%} with the looks (make calibrate: "
          f"10,000)")
    assert not problems
    # the false share of one table lies in [0, 1]: its mean's Monte Carlo error is at most that of a rate
    assert tally.fdp_first / n <= LEVEL + mc(n) and tally.fdp_looks / n <= LEVEL + mc(n)
    assert tally.looks[decision.LOOKS[1]] > 0      # some claims were taken to a later look


def test_the_a_a_controls_family_holds_its_level():
    n = 300
    tally, _, _ = simulate.run({"aa": load_all()["aa"]}, n, seed=12, looks=False)
    assert tally.control_first / n <= LEVEL * decision.SPEND[0] + mc(n, LEVEL * decision.SPEND[0])


# --- a lesson's single number, as one draw (issue 33, item 5) ------------------------------------------------------
def value_exercise(windows: int | None = 1280) -> dict[str, Exercise]:
    return exercise([Claim(text="t", ours="a.val_loss[500]", value=2.090, lesson="2.090", windows=windows,
                           delta=0.06)])


@pytest.mark.parametrize("at_value, wrong, at_most", [
    (True, NOT_REPRODUCED, LEVEL * decision.SPEND[0]),   # at its true value: "not reproduced" at the first look's level
    (False, REPRODUCED, LEVEL * decision.SPEND[0]),      # delta from ours: "reproduced" at most at it
])
def test_a_lessons_single_number_is_called_wrongly_at_most_at_the_level(at_value, wrong, at_most):
    ex = value_exercise()
    (w,), _ = boundary.worlds(ex, at_value=at_value)
    exercises = simulate.exercises_of([w], ex)
    rng = np.random.default_rng(5)
    n = 1500
    got = [table(simulate.results([w], [boundary.draw(w, rng)], [3], exercises)).rows[0].verdict.verdict
           for _ in range(n)]
    rate = sum(v == wrong for v in got) / n
    print(f"\na lesson's 2.090 {'at its true value' if at_value else 'delta from ours'}: {wrong} in {rate:.2%}")
    assert rate <= at_most + mc(n, at_most)


def test_prediction_is_within_noise_when_it_can_neither_confirm_nor_reject():
    """Failing to reject is not reproducing: seeds as wide as the delta can say neither."""
    c = Claim(text="t", ours="a.x", value=2.0, lesson="2.0", delta=0.05)
    seeds = {1: 2.01, 2: 1.95, 3: 2.06}
    v = judge(c, lambda *_: float(np.mean(list(seeds.values()))), seeds=lambda *_: seeds)
    assert v.verdict == WITHIN_NOISE


# --- the defects of issue 33, each on the rule that fixes it ---------------------------------------------------------
def test_a_per_seed_band_at_the_true_value_does_not_turn_not_reproduced_as_seeds_are_added():
    """`abs(x - 0.43) < 0.005` per seed tested the seeds' mean absolute deviation: at the true mean 0.43 with a
    spread of 0.01 it read "not reproduced" in 18, 72, 98, 100% of draws at 3, 6, 9, 12 seeds. On the mean, as a
    band, it stays at the level however many seeds."""
    claim = Claim(text="t", check="abs(a.x - 0.43) < 0.005")
    rng = np.random.default_rng(6)
    for n in decision.LOOKS:
        wrong = 0
        for _ in range(600):
            seeds = dict(enumerate(rng.normal(0.43, 0.01, n), 1))
            v = judge(claim, lambda *_: float(np.mean(list(seeds.values()))), seeds=lambda *_: seeds)
            wrong += v.verdict == NOT_REPRODUCED
        assert wrong / 600 <= LEVEL + mc(600), (n, wrong / 600)


def test_seeds_that_all_agree_are_never_firm_outside_the_family():
    """A count every seed gives alike was "reproduced" with no test and no place in the family. Now the sign test
    over seeds, in the family: at 3 seeds its least p is 0.25."""
    ex = exercise([Claim(text="t", check="a.heads_last3_spread_sum_block1 >= 2")], variants=("a",))
    seeds = {1: 2.0, 2: 2.0, 3: 2.0}
    t = table({"own": Numbers(ex["own"], {"a": {"heads_last3_spread_sum_block1": seeds}})})
    (c,) = t.rows[0].verdict.comparisons
    assert t.rows[0].verdict.verdict == WITHIN_NOISE and c.family == "table"
    assert c.p_adjusted == pytest.approx(decision.sign_p(3, 3) / decision.SPEND[0])
    assert c.raw_p == decision.sign_p(3, 3) == 0.25
    # At the boundary of a count that ties (it holds on half the seeds): never firm at the first look.
    (w,), _ = boundary.worlds(ex)
    rng = np.random.default_rng(7)
    exercises = simulate.exercises_of([w], ex)
    assert not any(table(simulate.results([w], [boundary.draw(w, rng)], [3], exercises)).rows[0].verdict.verdict
                   in decision.FIRM for _ in range(300))


def test_the_spreads_table_has_a_row_for_every_number_and_says_where_each_comes_from():
    rows = spreads.table()
    assert all(r.source.split(":")[0] in ("measured", "assumed", "by construction") for r in rows)
    assert spreads.find("x", "y", "no_such_metric", None).source.startswith("assumed")
    assert spreads.find("nopos", "pos", "val_loss", None).per_window
    assert spreads.find("baseline", "base", "n_params", None).kind == spreads.SpreadKind.CONSTANT


def test_make_calibrate_answers_a_mistake_in_one_line_and_prints_the_rates():
    for argv in (["tables=0"], ["tabels=10"], ["workers=two"]):
        p = subprocess.run([sys.executable, "-m", "analysis.calibration", *argv], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 2 and p.stderr.startswith("error:") and p.stderr.count("\n") == 1, p.stderr
    p = subprocess.run([sys.executable, "-m", "analysis.calibration", "tables=3", "power=0"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "first look (3 seeds): false discovery rate" in p.stdout
    assert "claims that cannot be set on their boundary: none" in p.stdout


def test_the_spreads_are_measured_from_a_stores_runs(quick_store):
    """The A/A control's three seeds a variant at quick size: a row per variant and metric, with its kind."""
    p = subprocess.run([sys.executable, "-m", "analysis.calibration.spreads", "experiments=[aa]", "quick=true",
                        f"tracking_uri=sqlite:///{quick_store}/mlflow.db"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    loss = [r for r in rows if r["metric"] == "val_loss"]
    assert {r["variant"] for r in loss} == {"a", "b"} and all(r["kind"] == "continuous" for r in loss)
    assert {r["kind"] for r in rows if r["metric"] == "n_params"} == {"constant"}
    assert all(r["source"].startswith("measured: 3 seeds, quick/aa") for r in rows)


# --- a table that decides: the defects of the family-wise table with 2 degrees of freedom --------------------------
def test_every_comparison_4_seed_deviations_on_its_true_side_is_found_at_the_first_look_in_most_claims():
    """Each comparison's seeds' variance pooled over the store's other variants of its metric (the census of the
    study: census.py), the family at a false discovery rate: at 3 seeds an effect of 4 seed standard deviations is
    found at the first look in 80% of claims (make calibrate, 100 stores: 81.5%); 12 stores here, whose claims share
    variants, so the line sits below. The family-wise table on 2 degrees of freedom found it in 0.71%."""
    n = 12
    tally, ws, _ = simulate.run(load_all(), n, seed=21, effect=4.0, looks=False)
    counted = sum(w.counted for w in ws)
    found = sum(tally.reproduced_first.values()) / (counted * n)
    print(f"\npower at 4 sd, first look: {found:.1%} of {counted} claims over {n} tables")
    assert found >= 0.75


def test_the_loss_at_a_position_is_judged_as_a_sample_of_the_text_however_many_seeds_are_added():
    """The context exercise's comparisons of the loss at one position, every window drawn afresh in each simulated
    store (the text's population, not our fixed windows) and each window's loss logged: on their boundary and read
    at 12 seeds (every look reached), a false firm verdict stays at the level. Judged as if the windows were the
    whole text, 64% of tables held a false firm verdict at 12 seeds."""
    files = {"context": load_all()["context"]}
    ws, _ = boundary.worlds(files)
    exercises = simulate.exercises_of(ws, files)
    rng = np.random.default_rng(22)
    n, wrong = 150, 0
    for _ in range(n):
        t = table(simulate.results(ws, [boundary.draw(w, rng) for w in ws], [decision.LOOKS[-1]] * len(ws), exercises))
        rows = {(r.exercise, r.index): r.verdict for r in t.rows}
        wrong += any(w.counted and simulate.false_firm(w, rows[w.exercise, w.index]) for w in ws)
    assert all(c.difference.se_windows for r in t.rows for c in r.verdict.comparisons if not r.verdict.finding)
    assert wrong / n <= LEVEL + mc(n), wrong / n


def test_the_a_a_control_is_brought_to_the_looks_the_table_reaches():
    """make decide brings the A/A control to each look it brings a claim to, so that the control checks the engine
    at the looks the table uses, not at the first alone."""
    files = load_all()
    tally, ws, _ = simulate.run({"aa": files["aa"], "nopos": files["nopos"]}, 20, seed=23)
    assert tally.control_looked > decision.LOOKS[0] * 20
