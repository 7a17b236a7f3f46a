"""The verdict table (analysis.verdicts.table): one family across exercises, its p adjusted by Benjamini and
Hochberg's step-up, findings outside it."""
import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from analysis import verdicts
from analysis.report import numbers
from analysis.report import verdict_text as text
from analysis.verdicts import decision, stats
from analysis.verdicts.claims import FINDING, NOT_REPRODUCED, REPRODUCED, WITHIN_NOISE
from analysis.verdicts.results import Numbers
from lm.settings.claims import Claim
from lm.settings.exercises import Exercise


def exercise(name, claims, values):
    """An exercise's results as plain numbers: {(variant, key): [value per seed]}, seeds numbered from 1."""
    final = {}
    for (variant, key), per in values.items():
        final.setdefault(variant, {})[key] = dict(enumerate(per, 1))
    ex = Exercise(name=name, title=name, lesson="-", measures="-", variants={v: [] for v, _ in values}, claims=claims)
    return Numbers(ex, final)


# Margins a one-sample t over 3 seeds puts at p ≈ 0.012 each: each alone is reproduced at the first look's share of
# the level; among a family of mostly null comparisons they do not survive, among true ones they do.
NEAR = [0.085, 0.105, 0.125]


def test_the_family_is_adjusted_together_by_benjamini_hochberg_and_the_verdict_follows_the_adjusted_p():
    # each variant its own metric, so that no seeds' variance is pooled (variance.py: fewer than MIN_GROUPS)
    values = {("a", "x"): [0.0, 0.0, 0.0], **{(f"v{i}", f"x{i}"): NEAR for i in range(9)},
              ("far", "y"): [5.0, 5.1, 5.2], **{(f"n{i}", f"z{i}"): [0.1, -0.1, 0.05] for i in range(30)}}
    checks = [Claim(text=f"v{i}", check=f"v{i}.x{i} > a.x") for i in range(9)] + \
        [Claim(text="far", check="far.y > a.x"), Claim(text="q", check="v0.x0 > a.x", finding=True)] + \
        [Claim(text=f"n{i}", check=f"n{i}.z{i} > a.x") for i in range(30)]
    runs = {"one": exercise("one", checks, values)}
    t = verdicts.table(runs)
    raw = [c.raw_p for c in t.family]
    assert len(raw) == 40 and all(0.005 < p < decision.ALPHA * decision.SPEND[0] for p in raw[:9])  # not the finding
    sequential = [c.p for c in t.family]
    assert sequential == pytest.approx([min(1.0, p / decision.SPEND[0]) for p in raw])   # the first look: its share
    assert [c.p_adjusted for c in t.family] == pytest.approx(multipletests(sequential, method="fdr_bh")[1])
    by = {r.claim.text: r.verdict for r in t.rows}
    assert all(by[f"v{i}"].verdict == WITHIN_NOISE for i in range(9))         # each alone: reproduced
    assert "the level spent over the looks and shared over the table" in text.note(by["v0"])
    assert by["far"].verdict == REPRODUCED and by["q"].verdict == FINDING and text.p_adjusted(by["q"]) == ""
    frame = text.frame(t)
    assert list(frame.columns) == text.COLUMNS and frame.loc[0, "p (adjusted)"] != "-"
    # the interval shown is at the level the verdict used: far's, firm, excludes zero there
    (c,) = by["far"].comparisons
    low, high = c.difference.at(c.level)
    assert low > 0 and f"at {numbers.percent(1 - c.level)}" in text.interval(by["far"])
    assert "Benjamini-Hochberg" in text.preamble(t) and f"{decision.MIN_SEEDS} seeds" in text.preamble(t)
    assert text.preamble(t).startswith(text.GUARANTEE)
    # among true comparisons the same nine survive: the step-up's threshold rises with the discoveries
    values.update({(f"n{i}", f"z{i}"): [1.0, 1.1, 1.2] for i in range(30)})
    by = {r.claim.text: r.verdict for r in verdicts.table({"one": exercise("one", checks, values)}).rows}
    assert all(by[f"v{i}"].verdict == REPRODUCED for i in range(9))


def test_bh_is_statsmodels_fdr_bh():
    rng = np.random.default_rng(0)
    for m in (1, 2, 7, 48):
        for p in (rng.uniform(0, 0.1, m), rng.uniform(0, 1, m), np.r_[rng.uniform(0, 0.01, m - 1), 1.0]):
            assert decision.bh(p) == pytest.approx(multipletests(p, method="fdr_bh")[1])


def test_two_weak_p_among_48_nulls_do_not_survive_and_alone_they_do():
    """p 0.046 and 0.032 (df 2) among 48 comparisons."""
    q = decision.Family({"table": {"one": 48}}).adjust("table", [0.046, 0.032] + [0.5] * 46)
    assert [decision.outcome(-1, x) for x in q[:2]] == [WITHIN_NOISE, WITHIN_NOISE]
    alone = decision.Family({"table": {"one": 1}}).adjust("table", [0.032])
    assert decision.outcome(-1, alone[0]) == NOT_REPRODUCED    # alone, it was a verdict


def test_a_claim_reads_another_exercise_through_the_table():
    base = exercise("baseline", [], {("base", "k"): [0.40, 0.42, 0.41]})
    micro = exercise("microgpt", [Claim(text="m", check="microgpt.k < baseline:base.k", finding=True),
                                  Claim(text="gone", check="microgpt.k < nosuch:base.k")],
                     {("microgpt", "k"): [0.10, 0.12, 0.11]})
    t = verdicts.table({"baseline": base, "microgpt": micro})
    found, gone = t.of("microgpt")
    assert found.verdict.verdict == FINDING and "lower" in text.wording(found.verdict)
    assert gone.verdict.verdict == "not run" and "nosuch" in text.note(gone.verdict)
    assert text.summary(t, "microgpt") == "1 finding, 1 not run"


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
    assert c.raw_p == pytest.approx(p6) and text.seeds(v) == "6"
    assert "look 2 of 4, 6 seeds: seeds added after the first look (make decide)" in text.note(v)


def test_a_verdict_decided_at_an_earlier_look_says_so_beside_the_last_looks_interval():
    """Issue 33: the interval shown is the one the verdict uses; where the sequential p is an earlier look's, the
    interval of the last look may hold zero, and the note says which look decided."""
    values = {("a", "x"): [0.0] * 6, ("v", "x"): [0.30, 0.31, 0.32, -0.5, 0.4, -0.3]}
    v = verdicts.table({"one": exercise("one", [Claim(text="v", check="v.x > a.x")], values)}).rows[0].verdict
    (c,) = v.comparisons
    low, _ = c.difference.at(c.level)
    assert v.verdict == REPRODUCED and low < 0
    assert "v.x > a.x: decided at the look of 3 seeds" in text.note(v)
    assert "the interval shown is the last look's" in text.note(v)


def test_seeds_between_two_looks_are_judged_at_the_lower_one():
    """The looks are fixed seed counts: a variant with 8 seeds is read on its first 6, and the table says so."""
    v = looked(8)
    assert text.seeds(v) == "6" and set(v.comparisons[0].looks) == {3, 6}
    assert "judged on the first 6 seeds of each variant" in text.note(v)
    assert looked(3).comparisons[0].looks.keys() == {3} and "seeds added after the first look" not in text.note(looked(3))


# --- issue 33: one family, whatever is reported ---------------------------------------------------------------
def every_number(exercises: dict[str, Exercise], seed: int = 0) -> dict[str, Numbers]:
    """Three seeds of every number the exercises' claims read, drawn at random: a tag 'e' or 'r', else a number, the
    same on every seed where a deterministic check reads it."""
    from lm.settings.exercises import terms, tree

    rng = np.random.default_rng(seed)
    final = {name: {} for name in exercises}
    curves = {name: {} for name in exercises}
    for name, ex in exercises.items():
        named = [t for c in ex.claims for expr in filter(None, (c.check, c.ours)) for t in terms(tree(expr).body)]
        named += [(v, c.answer, None) for c in ex.claims if c.answer for v in ex.variants]
        alike = {t for c in ex.claims if c.deterministic for t in terms(tree(c.check).body)}
        for variant, key, step in named:
            owner, own = variant.split(":", 1) if ":" in variant else (name, variant)
            one = float(rng.normal(1, 0.1))
            seeds = {s: (str(rng.choice(["e", "r"])) if key == "probe_top1" else one if (variant, key, step) in alike
                         else float(rng.normal(1, 0.1))) for s in (exercises[owner].runs(3)[0].seed + k for k in range(3))}
            if step is None:
                final[owner].setdefault(own, {})[key] = seeds
            else:
                curves[owner].setdefault(own, {}).setdefault(key, {})[step] = seeds
    return {name: Numbers(ex, final[name], curves[name]) for name, ex in exercises.items()}


def adjusted(t: verdicts.Table, exercise: str) -> list:
    return [c.p_adjusted for r in t.of(exercise) for c in r.verdict.comparisons]


def test_a_report_of_fewer_exercises_is_never_firmer_than_the_full_one():
    """The family is counted from every exercise file; the exercises a report leaves out count as p = 1, and the
    step-up is monotone: each shown claim's adjusted p is at least the full table's, and no verdict is firm there
    that is not firm in the full table (the seeds' variance pooled over the whole store either way)."""
    from lm.settings.exercises import load_all

    files = load_all()
    numbers = every_number(files)
    whole = verdicts.table(numbers)
    for name, ex in files.items():
        shown = {name: numbers[name], **{other: numbers[other] for other in verdicts.read_from(ex)}}
        alone = verdicts.table(shown, files, [name], pool=numbers)
        assert [r.exercise for r in alone.rows] == [name] * len(ex.claims)
        for a, w in zip(adjusted(alone, name), adjusted(whole, name)):
            assert (a is None) == (w is None) and (a is None or a >= w - 1e-12), name
        for a, w in zip(alone.rows, whole.of(name)):
            assert a.verdict.verdict not in decision.FIRM or a.verdict.verdict == w.verdict.verdict
    assert any(p is not None for p in adjusted(whole, "baseline"))


def test_the_family_is_counted_from_the_files_before_any_run():
    from lm.settings.exercises import load_all

    empty = {name: Numbers(ex, {}) for name, ex in load_all().items()}
    t = verdicts.table(empty)
    assert t.family == [] and all(r.verdict.verdict in ("not run", "") for r in t.rows)
    slots = t.counted.slots["table"]
    assert slots["baseline"] > 20 and "aa" not in slots and t.counted.slots["control"] == {"aa": 4}
    assert f"{t.counted.total('table')} comparisons (baseline {slots['baseline']}," in text.preamble(t)
