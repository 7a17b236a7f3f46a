"""Numbers over seeds: mean ± std, Welch's interval for a difference, and interpolation at a time budget."""
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

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


@dataclass
class Difference:
    diff: float                 # mean(a) - mean(b)
    low: float | None = None    # the 95% interval; None when a side has one seed
    high: float | None = None
    n_a: int = 0
    n_b: int = 0

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
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:  # every seed gave the same number on both sides: the difference is exact
        d.low = d.high = d.diff
        return d
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    half = stats.t.ppf(0.5 + confidence / 2, df) * se
    d.low, d.high = d.diff - half, d.diff + half
    return d


def reading(d: Difference, variant: str) -> str:
    """What the interval lets one say, in words."""
    if d.wording in (ONE_SEED, CANNOT_TELL):
        return d.wording
    return f"{variant} is {d.wording}"


def interval(d: Difference, digits: int = 3) -> str:
    """'+0.041 (+0.012 to +0.070)', or the difference alone when there is no interval."""
    text = f"{d.diff:+.{digits}f}"
    return text if d.low is None else f"{text} ({d.low:+.{digits}f} to {d.high:+.{digits}f})"


def at_time(times, values, t: float) -> tuple[float, bool]:
    """values linearly interpolated at time t, and whether the series reached t (else its last value)."""
    times, values = np.asarray(times, float), np.asarray(values, float)
    order = np.argsort(times)
    times, values = times[order], values[order]
    if t > times[-1] * (1 + 1e-9):  # the budget variant's own mean time may differ in the last digit
        return float(values[-1]), False
    return float(np.interp(t, times, values)), True
