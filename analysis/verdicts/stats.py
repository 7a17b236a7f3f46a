"""Numbers over seeds: mean ± std, 95% t-intervals for a difference (paired over seeds, Welch's, or one sample
against a constant), and the seeds a difference would need."""
import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats import power as power_solvers
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from analysis.verdicts import decision

ONE_SEED = "one seed: no interval"
CANNOT_TELL = "the seeds cannot tell these apart"


def mean_std(values, digits: int = 3) -> str:
    """'1.234 ± 0.010'; a single value has no spread to show, none at all is '-'."""
    v = [float(x) for x in values if x is not None and math.isfinite(float(x))]
    if not v:
        return "-"
    if len(v) == 1:
        return f"{v[0]:.{digits}f}"
    return f"{np.mean(v):.{digits}f} ± {np.std(v, ddof=1):.{digits}f}"


PAIRED, WELCH, ONE_SAMPLE = "paired t", "Welch t", "one-sample t"


@dataclass
class Difference:
    diff: float                 # mean(a) - mean(b)
    low: float | None = None    # the 95% interval; None when a side has one seed
    high: float | None = None
    n_a: int = 0
    n_b: int = 0
    method: str = WELCH         # PAIRED (per-seed differences), WELCH, or ONE_SAMPLE (against a constant)
    sd: float = 0.0             # the spread the interval rests on: of the differences, or pooled for Welch
    p: float | None = None      # two-sided p of "no difference"; None where there is no interval
    se: float = 0.0             # the standard error of diff from the seeds' spread, with its degrees of freedom
    df: float = math.inf
    se_windows: float | None = None  # the validation windows' standard error of diff, where it was added

    @property
    def exact(self) -> bool:
        """Every seed gave the same difference: no spread, no chance."""
        return self.low is not None and self.low == self.high

    @property
    def wording(self) -> str:
        if self.low is None:
            return ONE_SEED
        if self.low <= 0 <= self.high:
            return CANNOT_TELL
        return "higher" if self.diff > 0 else "lower"


def welch(a, b, confidence: float = 0.95) -> Difference:
    """The difference of the means of a and b with Welch's t-interval (unequal variances)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = Difference(float(a.mean() - b.mean()), n_a=len(a), n_b=len(b))
    if len(a) < 2 or len(b) < 2:
        return d
    d.sd = float(math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2))
    if a.var() == 0 and b.var() == 0:  # every seed gave the same number on both sides: the difference is exact
        return _exact(d)
    test = stats.ttest_ind(a, b, equal_var=False)
    ci = test.confidence_interval(confidence)
    d.low, d.high, d.p = float(ci.low), float(ci.high), float(test.pvalue)
    d.se, d.df = float(math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))), float(test.df)
    return d


def _exact(d: Difference) -> Difference:
    """A difference every seed gives alike: its interval is the point, and it is no chance either way."""
    d.sd = 0.0
    d.low = d.high = d.diff
    d.p = 0.0 if d.diff != 0 else 1.0
    return d


def paired(a, b, confidence: float = 0.95) -> Difference:
    """The mean of the per-seed differences a[i] - b[i] with a t-interval over them: for runs that pair by seed
    (the same seed sees the same batches in the same order), which removes what the seeds share."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        raise ValueError(f"paired values need one per seed on each side, got {len(a)} and {len(b)}")
    return one_sample(a - b, 0.0, confidence, PAIRED)


def one_sample(x, c: float = 0.0, confidence: float = 0.95, method: str = ONE_SAMPLE) -> Difference:
    """mean(x) - c with the t-interval over the values of x."""
    x = np.asarray(x, float)
    d = Difference(float(x.mean() - c), n_a=len(x), n_b=len(x), method=method)
    if len(x) < 2:
        return d
    d.sd = float(x.std(ddof=1))
    if d.sd <= 1e-12 * max(1.0, abs(float(x.mean()))):  # every seed gave the same difference (to round-off): exact
        return _exact(d)
    test = stats.ttest_1samp(x, c)
    ci = test.confidence_interval(confidence)  # of mean(x)
    d.low, d.high, d.p = float(ci.low) - c, float(ci.high) - c, float(test.pvalue)
    d.se, d.df = d.sd / math.sqrt(len(x)), float(len(x) - 1)
    return d


def with_windows(d: Difference, se_windows: float, confidence: float = 0.95) -> Difference:
    """d with the validation windows' standard error added to the seeds': every run is scored on the same windows,
    so their error is shared by the seeds and does not shrink with them. se = √(se_seeds² + se_windows²), its
    degrees of freedom by Welch-Satterthwaite (the windows' term from over a thousand windows, taken as known)."""
    if d.low is None or se_windows <= 0:
        return d
    se = math.sqrt(d.se ** 2 + se_windows ** 2)
    df = math.inf if d.se == 0 else se ** 4 / (d.se ** 4 / d.df)
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    return Difference(d.diff, d.diff - half, d.diff + half, d.n_a, d.n_b, d.method, d.sd,
                      float(decision.t_p(d.diff, se, df)), d.se, d.df, se_windows)


def seeds_needed(d: Difference, power: float = decision.POWER, most: int = 100, alpha: float = decision.ALPHA) \
        -> int | None:
    """Seeds per variant that would find a true difference of the size observed, at the spread observed, with
    `power` (80%) at level `alpha` (the table's; `make decide` gives the share its next look spends, divided
    among the comparisons still open, Holm's first threshold): statsmodels' t-test power solvers (paired or
    one-sample: one t over the per-seed margins; Welch: two independent samples of equal size). The validation
    windows' error does not shrink with seeds: the difference is first shortened by what it takes of it
    (z_alpha/2 + z_power standard errors, the safe side of adding them in squares). None if more than `most`, or
    if there is no spread, or no difference left, to go on."""
    shown = abs(d.diff)
    if d.se_windows:
        shown -= (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) * d.se_windows
    if d.sd <= 0 or shown <= 0:
        return None
    solver = power_solvers.TTestIndPower() if d.method == WELCH else power_solvers.TTestPower()
    with warnings.catch_warnings():  # a difference far too small for `most` seeds: the solver does not converge
        warnings.simplefilter("ignore", ConvergenceWarning)
        n = solver.solve_power(effect_size=shown / d.sd, alpha=alpha, power=power, alternative="two-sided")
    n = float(np.atleast_1d(n)[0])
    n = decision.MIN_SEEDS if not math.isfinite(n) else max(decision.MIN_SEEDS, math.ceil(n))  # NaN: fewer than 2
    return n if n <= most else None


def windows_hold_zero(d: Difference, confidence: float = 0.95) -> bool:
    """Whether the validation windows' error alone keeps zero in the interval: no number of seeds resolves it."""
    return d.se_windows is not None and abs(d.diff) <= stats.norm.ppf(0.5 + confidence / 2) * d.se_windows


def reading(d: Difference, variant: str) -> str:
    """What the interval lets one say, in words."""
    if d.wording in (ONE_SEED, CANNOT_TELL):
        return d.wording
    return f"{variant} is {d.wording}"


def interval(d: Difference, digits: int = 3) -> str:
    """'+0.041 (+0.012 to +0.070)', or the difference alone when there is no interval; where the windows' error
    was added, both standard errors: '+0.041 (+0.002 to +0.080; se seeds 0.010, windows 0.015)'."""
    text = f"{d.diff:+.{digits}f}"
    if d.low is None:
        return text
    parts = f"{d.low:+.{digits}f} to {d.high:+.{digits}f}"
    if d.se_windows is not None:
        parts += f"; se seeds {d.se:.{digits}f}, windows {d.se_windows:.{digits}f}"
    return f"{text} ({parts})"


def summary(values, confidence: float = 0.95) -> dict[str, float]:
    """mean, std, n and the t-interval of the mean over seeds (NaN where one seed gives no spread)."""
    v = np.asarray([float(x) for x in values if x is not None and np.isfinite(float(x))])
    n = len(v)
    mean = float(v.mean()) if n else np.nan
    std = float(v.std(ddof=1)) if n > 1 else np.nan
    low = high = np.nan
    if n > 1:
        low, high = stats.t.interval(confidence, n - 1, loc=mean, scale=std / np.sqrt(n)) if std > 0 \
            else (mean, mean)
    return {"mean": mean, "std": std, "n": n, "low": float(low), "high": float(high)}
