"""The claims table's decision rule, declared once: its outcomes, its level, the family it holds that level over,
the smallest seed count for a firm verdict, the looks at which seeds may be added (`make decide`) and how the level
is spent over them, and the tolerance a lesson's single number is read with.

Numbers only (numpy, scipy, statsmodels): the report decides with these functions and the calibration test
(tests/analysis/test_calibration.py) simulates studies through the same ones.
"""
from enum import StrEnum

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests


class Outcome(StrEnum):
    """What the table says about one claim (or one comparison of it)."""
    REPRODUCED = "reproduced"
    WITHIN_NOISE = "within seed noise"
    NOT_REPRODUCED = "not reproduced"
    INDICATIVE = "indicative"          # fewer seeds than MIN_SEEDS: the means' direction, never a verdict
    FINDING = "finding"                # a lesson's question, or a comparison no lesson makes: an interval, no verdict
    NOT_RUN = "not run"
    NOT_APPLICABLE = "not applicable"  # to the corpus the runs read; the note says why
    NOT_MEASURED = "not measured"      # the runs were made with the measurement switched off; the note names it


FIRM = (Outcome.REPRODUCED, Outcome.NOT_REPRODUCED)

# The level: two-sided 5%, held family-wise over the table (each direction 2.5%).
ALPHA = 0.05
# Holm rather than Benjamini-Hochberg: each row is read and quoted on its own ("the lesson's 1.761 is not
# reproduced"), so what a reader needs is that no firm verdict in the table is wrong (family-wise error), not that
# wrong ones are a small share of the firm ones (false discovery rate). Holm holds that under any dependence between
# the comparisons (the table's share runs: several read the same base model) and is uniformly stronger than
# Bonferroni.
METHOD = "holm"
FAMILY = ("every comparison of every claim in the table that carries a p-value: a seed interval over at least "
          f"MIN_SEEDS seeds, or a lesson's single number against our prediction interval. Outside it: findings (the "
          f"lessons' questions and comparisons no lesson makes: an interval and a wording, no verdict), exact checks "
          f"(a count, a tag, a number every seed gives alike: no sampling error to control) and indicative rows")
# A firm verdict needs 3 seeds. The t-interval holds its level only if the per-seed values are normal (the
# calibration test's assumption); Shapiro-Wilk, which the A/A exercise uses to check that, needs 3 values at least,
# and with 2 the interval is 12.7 standard errors wide (t(1) = 12.71): no difference this table asks about resolves.
MIN_SEEDS = 3
# The looks: a comparison is judged on the first 3 seeds of each variant it reads, and `make decide` may add rounds
# of ROUND seeds, up to 12. A claim left undecided at one look and judged again at the next is a second test of the
# same claim (optional stopping: following the old note "add seeds" once took a false verdict from 2.4% to 5.5%), so
# the level is spent over the looks (alpha spending, the Bonferroni form): look k may use SPEND[k] of it, and a
# comparison's p is its sequential p, min over the looks it reached of p_k / SPEND[k]. That is a valid p-value
# whatever rule chooses which claims get more seeds and when to stop (P(any look's p_k <= SPEND[k]·a) <= a, the looks
# being fixed seed counts), so Holm over the table still holds the family-wise level; the calibration test simulates
# the whole procedure. Half the level at the first look: a table never extended loses little (its Holm thresholds
# halve); the other half is shared by the three added rounds. A variant with seeds between two looks is judged at the
# lower one (its first LOOKS[k] seeds): the looks must be fixed in advance for the spending to hold.
LOOKS = (MIN_SEEDS, 6, 9, 12)
SPEND = (1 / 2, 1 / 6, 1 / 6, 1 / 6)
ROUND = LOOKS[1] - LOOKS[0]
# Planning: the power `make decide` plans a comparison's seeds for, statsmodels' solvers at the level of its last look.
POWER = 0.8
# A lesson's single number is one draw from the lesson's own setup, not ours. Our prediction interval for a new
# run is widened by this share of the lesson's number for that difference of setup (kernels, batch order, the
# initialisation's random stream). Its size is the lessons' own: lesson 000's recipe ends at 1.761 and lesson 002's
# CPU recipe, a model of the same width on the same corpus, at 1.746, 0.85% apart; 1% covers that.
TOLERANCE = 0.01


def indicative(n: int) -> str:
    """The verdict column's words for a comparison with too few seeds."""
    return f"{Outcome.INDICATIVE} ({n} seed{'s' * (n != 1)})"


def adjust(p) -> np.ndarray:
    """The family's p-values adjusted by METHOD (statsmodels' multipletests), in the order given."""
    p = np.asarray(p, float)
    if not len(p):
        return p
    return multipletests(p, alpha=ALPHA, method=METHOD)[1]


def outcome(diff: float, p: float) -> Outcome:
    """One comparison's verdict from its margin's direction and its (adjusted) p: firm only below the level."""
    if p >= ALPHA:
        return Outcome.WITHIN_NOISE
    return Outcome.REPRODUCED if diff > 0 else Outcome.NOT_REPRODUCED


def decide(diff, p) -> list[Outcome]:
    """The verdicts of a whole family: its p-values adjusted together, then each comparison's outcome."""
    return [outcome(float(d), float(q)) for d, q in zip(diff, adjust(p))]


def t_p(diff, se, df):
    """Two-sided p of a t statistic diff / se with df degrees of freedom (arrays or numbers)."""
    return 2 * stats.t.sf(np.abs(np.asarray(diff, float)) / np.asarray(se, float), df)


def prediction_p(value: float, mean: float, sd: float, n: int) -> float:
    """How surprising the lesson's single number `value` is as one more draw of our runs (mean, sd over n seeds),
    its distance first shortened by the setup TOLERANCE: two-sided, from t(n - 1) · sd · √(1 + 1/n)."""
    gap = max(0.0, abs(value - mean) - TOLERANCE * abs(value))
    if sd <= 0:
        return 0.0 if gap > 0 else 1.0
    return float(t_p(gap, sd * np.sqrt(1 + 1 / n), n - 1))


def prediction_interval(mean: float, sd: float, n: int, value: float) -> tuple[float, float]:
    """Where one more run of ours would land with 1 - ALPHA probability, widened by TOLERANCE of `value`."""
    half = stats.t.ppf(1 - ALPHA / 2, n - 1) * sd * np.sqrt(1 + 1 / n) + TOLERANCE * abs(value)
    return mean - half, mean + half


def look(n: int) -> int | None:
    """The last look a comparison over n seeds per variant reached: the largest of LOOKS at most n; None below the
    first."""
    reached = [k for k in LOOKS if k <= n]
    return reached[-1] if reached else None


def sequential_p(at: dict):
    """A comparison's p over the looks it reached ({seeds: the look's raw p}): min of p_k / SPEND[k], at most 1.
    The p may be arrays of many comparisons (the calibration test's), a look a comparison did not reach inf."""
    p = np.minimum(1.0, np.min([np.asarray(p, float) / SPEND[LOOKS.index(n)] for n, p in at.items()], axis=0))
    return float(p) if p.ndim == 0 else p
