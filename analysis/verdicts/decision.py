"""The claims table's decision rule, declared once: its outcomes, its level, the family it holds that level over and
how the level is shared in it, the smallest seed count for a firm verdict, the looks at which seeds may be added
(`make decide`) and how the level is spent over them, and the exact tests for seeds that all agree.

Numbers only (numpy, scipy, statsmodels): the table decides with these functions, and the calibration
(analysis/calibration, `make calibrate`) measures the error rate of the whole table that uses them.
"""
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from scipy import special


class Outcome(StrEnum):
    """What the table says about one claim (or one comparison of it)."""
    REPRODUCED = "reproduced"
    WITHIN_NOISE = "within seed noise"
    NOT_REPRODUCED = "not reproduced"
    INDICATIVE = "indicative"          # fewer seeds than MIN_SEEDS, or means alone: their direction, never a verdict
    FINDING = "finding"                # a lesson's question, or a comparison no lesson makes: an interval, no verdict
    NOT_RUN = "not run"
    NOT_APPLICABLE = "not applicable"  # to the corpus the runs read; the note says why
    NOT_MEASURED = "not measured"      # the runs were made with the measurement switched off; the note names it


FIRM = (Outcome.REPRODUCED, Outcome.NOT_REPRODUCED)

# The level: two-sided 5%, the table's false discovery rate (each direction 2.5%).
ALPHA = 0.05
# The family: every comparison of every check and every value claim in the exercise files, counted from the files
# alone before any run (Family.of), so that it does not depend on which runs exist. Its comparisons' p are adjusted
# together by Benjamini and Hochberg's step-up, a comparison not judged (not run, indicative, or of an exercise the
# report leaves out) counting as p = 1. The guarantee: of the table's firm verdicts, on average at most ALPHA are
# wrong (the false discovery rate; with every claim on its boundary, the chance of any firm verdict at all), under
# independence or positive dependence of the comparisons (Benjamini and Yekutieli 2001); `make calibrate` measures
# it through the table, with the study's dependence (claims that read one variant) and without the assumptions
# (variances more unequal than pooled, heavy tails). The step-up is monotone: a p of 1 in place of a judged one can
# only take firm verdicts away, so `make report ABLATIONS=baseline` is never firmer than the full report's.
# Why a false discovery rate and not a family-wise error: most of the table's claims are true (the lessons report
# what their runs showed), and a family-wise rule spends its level as if every one might be false (docs/claims.md
# gives what it left firm).
# What a reader may conclude from one firm row: it is one of a set in which at most one in twenty is expected to be
# wrong; a row within noise says nothing either way.
# A firm verdict needs 3 seeds: with 2 the t-interval is 12.7 standard errors wide (t(1) = 12.71), and an exact test
# over 2 seeds cannot reach the level at all.
MIN_SEEDS = 3
# The looks: a comparison is judged on the first 3 seeds of each variant it reads, and `make decide` may add rounds of
# ROUND seeds, up to 12. A claim left undecided at one look and judged again at the next is a second test of the same
# claim (optional stopping, which raises the rate of false verdicts), so the level is spent over the looks (alpha
# spending, the Bonferroni form): look k may use SPEND[k] of it, and a comparison's p is its sequential p, min over
# the looks it reached of p_k / SPEND[k]. That is a valid p-value whatever rule chooses which claims get more seeds
# and when to stop (P(any look's p_k <= SPEND[k]·a) <= a, the looks being fixed seed counts), so the family's
# adjustment still holds the level; `make calibrate` simulates the whole procedure through the table. Three quarters
# of the level at the first look: `make ablations`' hour ends there, and it is the table most readers get; the last
# quarter is shared by the three rounds `make decide` may add. A variant with seeds between two looks is judged at the
# lower one (its first LOOKS[k] seeds): the looks must be fixed in advance for the spending to hold.
LOOKS = (MIN_SEEDS, 6, 9, 12)
SPEND = (3 / 4, 1 / 12, 1 / 12, 1 / 12)
ROUND = LOOKS[1] - LOOKS[0]
# Planning: the power `make decide` plans a comparison's seeds for, and the "seeds needed" note says, at the level
# its next look spends (Family.plan_level).
POWER = 0.8
# A lesson's single number is one draw from the lesson's own setup, judged both ways (claims.prediction): not
# reproduced when it lies outside our prediction interval for one more run (it is no draw of our setup), reproduced
# when the two one-sided tests put it within the claim's `delta` of our mean (our runs tell a number delta away),
# within noise otherwise. Delta is set per claim before any run, from the lesson's words or the quantity's meaning
# (each YAML comment says which), never from our runs.


def outcome(direction: float, p: float) -> Outcome:
    """One comparison's verdict from its margin's direction and its (adjusted) p: firm only below the level."""
    if p >= ALPHA or direction == 0:
        return Outcome.WITHIN_NOISE
    return Outcome.REPRODUCED if direction > 0 else Outcome.NOT_REPRODUCED


# --- p-values ------------------------------------------------------------------------------------------------
# scipy's special functions, which scipy.stats' t distribution calls after its argument checks: the same numbers
# (tests/analysis/test_claims.py against scipy.stats.ttest_1samp and ttest_ind) in a microsecond rather than a
# millisecond; the calibration judges millions of comparisons.
def t_p(diff, se, df):
    """Two-sided p of a t statistic diff / se with df degrees of freedom (arrays or numbers; df inf: normal)."""
    return 2 * special.stdtr(np.asarray(df, float), -np.abs(np.asarray(diff, float)) / np.asarray(se, float))


def t_quantile(q, df):
    """The q quantile of t with df degrees of freedom."""
    return special.stdtrit(np.asarray(df, float), np.asarray(q, float))


def sign_p(held: int, n: int) -> float:
    """The exact two-sided p of "it holds on half the seeds" when it held on `held` of n (a sign test over seeds,
    binomial at 1/2): for seeds that all agree, where a t-test has no spread to go on. 0.25 at 3 seeds of 3."""
    k = min(held, n - held)
    return float(min(1.0, 2 * special.bdtr(k, n, 0.5)))


def separation_p(n_a: int, n_b: int) -> float:
    """The exact two-sided p of two samples with no spread on either side and different values (every value of one
    above every value of the other): the permutation test's, 2 / C(n_a + n_b, n_a). 0.1 at 3 seeds against 3."""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


def bh(p) -> np.ndarray:
    """Benjamini and Hochberg's adjusted p, in the order given: statsmodels' multipletests(method="fdr_bh") to the
    last digit (tests/analysis/test_verdicts.py), without the garbage collection it runs on every call, which the
    calibration's hundred thousand adjustments cannot afford."""
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p)
    steps = np.minimum.accumulate((m / np.arange(m, 0, -1)) * p[order][::-1])[::-1]
    out = np.empty_like(p)
    out[order] = np.minimum(1.0, steps)
    return out


# --- the family ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    """Comparisons counted from the exercise files before any run, per family ("table": the claims; "control": the
    A/A control's) and per exercise: {family: {exercise: comparisons}}, adjusted together (the module's note)."""
    slots: Mapping[str, Mapping[str, int]]

    def total(self, family: str) -> int:
        return sum(self.slots.get(family, {}).values())

    def adjust(self, family: str, p: Sequence[float | None]) -> np.ndarray:
        """The adjusted p of the family's comparisons judged, given in any order (None: not judged, counted as 1),
        the rest of its counted comparisons at p = 1: Benjamini and Hochberg's over all of them, at most 1."""
        m = self.total(family)
        if len(p) > m:
            raise ValueError(f"{len(p)} comparisons of the {family} family found, {m} counted in the files")
        if not len(p):
            return np.zeros(0)
        padded = np.ones(m)
        padded[:len(p)] = [1.0 if x is None else x for x in p]
        return bh(padded)[:len(p)]

    def plan_level(self, family: str, look: int, decided: int = 0) -> float:
        """The raw two-sided level a comparison must reach at `look` (seeds) to be firm beside those already firm:
        the step-up's threshold for one more discovery, (decided + 1) / m of the level and of the share that look
        spends. `make decide` plans its seeds at it, and the "seeds needed" note says it."""
        m = self.total(family)
        return ALPHA * SPEND[LOOKS.index(look)] * min(m, decided + 1) / max(1, m)


def look(n: int) -> int | None:
    """The last look a comparison over n seeds per variant reached: the largest of LOOKS at most n; None below the
    first."""
    reached = [k for k in LOOKS if k <= n]
    return reached[-1] if reached else None


def next_look(n: int) -> int | None:
    """The look after the one n seeds reached; None after the last."""
    later = [k for k in LOOKS if k > n]
    return later[0] if later else None


def sequential_p(at: dict):
    """A comparison's p over the looks it reached ({seeds: the look's raw p}): min of p_k / SPEND[k], at most 1.
    The p may be arrays of many comparisons, a look a comparison did not reach inf."""
    p = np.minimum(1.0, np.min([np.asarray(p, float) / SPEND[LOOKS.index(n)] for n, p in at.items()], axis=0))
    return float(p) if p.ndim == 0 else p
