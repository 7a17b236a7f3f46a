"""Every interval the table shows lies where its quantity can: a share in [0, 1], a loss at least 0, a margin within
its numbers' ranges (analysis/verdicts/bounds.py)."""
import dataclasses
import math

import numpy as np
import pytest


from analysis.calibration import boundary, simulate
from analysis.verdicts import bounds, claims, table
from analysis.verdicts.bounds import Interval
from analysis.verdicts.claim_kinds import judge
from lm.settings.claims import Claim
from lm.settings.exercises import load_all


@pytest.mark.parametrize("key, expected", [
    ("heads_offset1_share_max_block1", bounds.SHARE), ("probe_p_e", bounds.SHARE), ("probe_top1_p", bounds.SHARE),
    ("word_validity", bounds.SHARE), ("short_word_validity", bounds.SHARE), ("init_onehot_share", bounds.SHARE),
    ("probe_lead_e", bounds.LEAD), ("val_loss", bounds.NONNEGATIVE), ("honest_val_loss", bounds.NONNEGATIVE),
    ("val_loss_at_position", bounds.NONNEGATIVE), ("line_length", bounds.NONNEGATIVE),
    ("knockout_prev_head_b1", bounds.ANY), ("no_such_metric", bounds.ANY),
])
def test_each_metric_has_the_range_its_meaning_gives(key, expected):
    assert bounds.of(key) == expected


def test_the_arithmetic_of_ranges():
    share, loss = Interval(0.0, 1.0), Interval(0.0, math.inf)
    assert share - share == Interval(-1.0, 1.0)
    assert share - 0.5 == Interval(-0.5, 0.5) and 0.5 * share == Interval(0.0, 0.5)
    assert loss - share == Interval(-1.0, math.inf)
    assert bounds.FUNCTIONS["abs"](share - 0.5) == Interval(0.0, 0.5)
    assert bounds.FUNCTIONS["min"](share, loss) == Interval(0.0, 1.0)
    assert (loss / Interval(1.0, 2.0)) == Interval(0.0, math.inf)


def test_the_lessons_65_percent_is_shown_within_0_and_1():
    """It was shown as (-7.664 to 9.049): a share's prediction interval on 3 wide seeds."""
    c = next(c for c in load_all()["baseline"].claims if c.text.startswith("…at 65%"))
    per = {1: 0.40, 2: 0.95, 3: 0.72}
    v = judge(c, lambda *t: float(np.mean(list(per.values()))), seeds=lambda *t: per)
    low, high = v.comparisons[0].band(0.001)
    assert 0.0 <= low < high <= 1.0


def test_no_interval_of_any_claim_kind_lies_outside_its_quantitys_range():
    """Every claim of the exercise files (checks, bands, value claims, the control, findings, questions), each number
    drawn with 30 times its spread so that an uncut interval would overflow, judged through the table: every
    comparison's interval at its level and at 99.9%, and every prediction interval, within its range."""
    files = load_all()
    ws, _ = boundary.worlds(files)
    for w in ws:
        for n in w.numbers.values():
            if n.spread.kind not in (boundary.SpreadKind.CONSTANT, boundary.SpreadKind.TAG):
                n.spread = dataclasses.replace(n.spread, sd=30 * max(n.spread.sd, 1e-3))
    exercises = simulate.exercises_of(ws, files)
    rng = np.random.default_rng(3)
    t = table(simulate.results(ws, [boundary.draw(w, rng) for w in ws], [3] * len(ws), exercises))
    kinds, checked = set(), 0
    for r in t.rows:
        for c in r.verdict.comparisons:
            d = c.difference
            if d is None or d.p is None or d.exact:
                continue
            kinds.add(r.claim.kind)
            if isinstance(c, claims.Prediction):
                for level in filter(None, (c.level, 0.001)):
                    low, high = c.band(level)
                    assert c.range[0] <= low <= high <= c.range[1], (r.exercise, r.index, low, high)
            for level in filter(None, (c.level, 0.001)):
                low, high = d.at(level)
                assert d.bounds[0] <= low <= high <= d.bounds[1], (r.exercise, r.index, c.text, low, high)
            checked += 1
    assert checked > 60 and {k.value for k in kinds} >= {"check", "value", "control", "finding"}
    assert any(math.isfinite(d) for r in t.rows for c in r.verdict.comparisons if c.difference is not None
               for d in c.difference.bounds)


def test_a_margin_over_shares_is_cut_to_where_it_can_lie():
    per = {("a", "word_validity"): {1: 0.01, 2: 0.99, 3: 0.5}}
    v = judge(Claim(text="t", check="a.word_validity > 0.5"), lambda *t: 0.5, seeds=lambda v, k, s: per[v, k])
    d = v.comparisons[0].difference
    assert d.bounds == (-0.5, 0.5) and -0.5 <= d.low and d.high <= 0.5
