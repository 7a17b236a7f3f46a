"""How many seeds an open claim needs: the power of its test at the level its next look needs, and what `make decide`
plans from it (`undecided`). Numbers only: the report says them in words, decide spends them, and the calibration
simulates decide's rounds with them.
"""
import math

import numpy as np
from scipy import special

from analysis.verdicts import decision, stats
from analysis.verdicts.claims import INDICATIVE, WITHIN_NOISE, Comparison, Verdict


def seeds_needed(d: stats.Difference, level: float, power: float = decision.POWER, most: int = 100,
                 least: int = 2) -> int | None:
    """Seeds per variant that would find a true difference of the size observed, at the spread observed, with
    `power` (80%) at the raw two-sided `level` the next look needs (decision.Family.plan_level): the t-test's power
    (t_power; paired or one-sample: one t over the per-seed margins; Welch: two independent samples of equal size) at
    every seed count at once; for seeds that all agree, the exact test's own; for a lesson's single number, one more
    run's error at each seed count. The validation windows' error does not shrink with seeds: the difference is
    first shortened by what it takes of it (z_level/2 + z_power standard errors, the safe side of adding them in
    squares). None if more than `most`, or if there is no
    difference left, to go on. `least`: the fewest to try (the power rises with the seeds: least = most asks
    whether `most` would do)."""
    n = np.arange(least, most + 1)
    if d.method == stats.PREDICTION:  # one more run's error, seeds' and evaluation's: not below the lesson's
        tau2 = max(0.0, d.se ** 2 - d.se_seeds ** 2)
        se = np.sqrt(d.sd ** 2 * (1 + 1 / n) + tau2)
        df = n - 1 + d.prior.df
        needs = (decision.t_quantile(1 - level / 2, df) + decision.t_quantile(power, df)) * se
        hit = n[abs(d.diff) >= needs] if d.sd > 0 else n[:0]
    elif d.method == stats.SIGN:
        if d.held not in (0, d.n_a):  # seeds that disagree: no spread to plan with, and not all one way
            return None
        hit = n[2 * 0.5 ** n < level]
    elif d.method == stats.SEPARATION:
        hit = n[[2 / math.comb(2 * k, k) < level for k in n]] if d.diff else n[:0]
    else:
        shown = abs(d.diff)
        if d.se_windows:
            shown -= (special.ndtri(1 - level / 2) + special.ndtri(power)) * d.se_windows
        if d.sd <= 0 or shown <= 0:
            return None
        hit = n[np.nan_to_num(t_power(shown / d.sd, n, level, d.method == stats.WELCH, d.prior.df)) >= power]
    return max(decision.MIN_SEEDS, int(hit[0])) if len(hit) else None


def t_power(effect: float, n: np.ndarray, level: float, two_samples: bool = False, prior_df: float = 0.0) \
        -> np.ndarray:
    """The two-sided t-test's power at each seed count n against a true difference of `effect` (>= 0) standard
    deviations: one sample (paired: over the per-seed margins), or two samples of n each, on the seeds' degrees of
    freedom plus a moderated variance's prior's. The noncentral t's distribution function, scipy's special function
    that scipy.stats' nct and statsmodels' TTestPower and TTestIndPower rest on (the same numbers:
    tests/analysis/test_claims.py), called directly: 20 microseconds rather than 0.5 ms through their wrappers, for
    every open comparison of every simulated table."""
    df = (2 * n - 2 if two_samples else n - 1) + prior_df   # a moderated variance adds its prior's
    df = np.minimum(df, 1e6)   # scipy's noncentral t at an infinite df: the normal's, to six digits
    nc = effect * np.sqrt(n / 2 if two_samples else n)
    crit = decision.t_quantile(1 - level / 2, df)
    with np.errstate(all="ignore"):
        # the wrong-way tail is at most level / 2; scipy 1.17 gives NaN for it far out, where it is 0
        return 1 - special.nctdtr(df, nc, crit) + np.nan_to_num(special.nctdtr(df, nc, -crit), nan=0.0)


def windows_hold_zero(d: stats.Difference, level: float) -> bool:
    """Whether the validation windows' error alone keeps zero in the interval at `level`: no number of seeds
    resolves it."""
    return bool(d.se_windows) and abs(d.diff) <= special.ndtri(1 - level / 2) * d.se_windows


def plan_level(c: Comparison) -> float:
    """The raw level the comparison's next look needs: the table's (Comparison.plan), else, judged on its own, the
    share of the whole level that look spends."""
    if c.plan is not None:
        return c.plan
    nxt = decision.next_look(c.n or 0) or decision.LOOKS[-1]
    return decision.ALPHA * decision.SPEND[decision.LOOKS.index(nxt)]


def needed(c: Comparison, most: int = 100, least: int = 2) -> int | None:
    """Seeds per variant that would give the comparison 80% power at the level its next look needs (seeds_needed);
    None where no number up to `most` would."""
    return seeds_needed(c.difference, plan_level(c), most=most, least=least) if c.difference is not None \
        else None


def undecided(v: Verdict) -> tuple[int | None, str]:
    """Of a claim the table leaves open, what `make decide` plans: the seeds its open comparisons need for 80% power
    at their next look's level (None for an indicative claim, whose next look is simply the first), and why more
    seeds would not decide it ("" where they could): none would, or not by the last look."""
    if v.verdict == INDICATIVE:
        return None, ""
    open_ = [c for c in v.comparisons if c.verdict == WITHIN_NOISE and c.difference is not None]
    last = decision.LOOKS[-1]
    if open_ and all(needed(c, most=last, least=last) for c in open_):   # the last look's seeds would do: how many
        return max(needed(c, most=last) for c in open_), ""
    if open_ and all(needed(c, least=100) for c in open_):
        return None, (f"more than {last} seeds for {decision.POWER:.0%} power, beyond the last look: left "
                      f"undecided")
    windows = any(windows_hold_zero(c.difference, plan_level(c)) for c in open_)
    return None, "more seeds would not decide it: " + (
        "the validation windows' own error, which seeds do not shrink, is as large as the difference" if windows
        else "the difference observed is too small for 100 seeds to find at the level its next look needs")
