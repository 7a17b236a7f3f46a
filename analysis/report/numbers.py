"""How the report writes the engine's numbers: a value as the lessons give theirs, a claim's own numbers, a mean and
its spread over seeds, a difference with its interval and what that lets one say, a confidence level by name."""
import math

import numpy as np

from analysis.verdicts import stats
from analysis.verdicts.claims import Shown
from analysis.verdicts.stats import Difference

CANNOT_TELL = "the seeds cannot tell these apart"
NO_INTERVAL = "one seed: no interval"
DESCRIPTIVE = "unadjusted, descriptive"   # an interval outside the table's family: what it shows, not a verdict


def fmt(value, percent: bool = False) -> str:
    """A number as the lessons print theirs: 0.650 (a share: 65%), 112,193, 1,234.5; a tag's text quoted; several
    joined by commas."""
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v, percent) for v in value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if percent:
            return f"{value:.0%}"
        if float(value).is_integer() and abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.3f}" if abs(value) < 100 else f"{value:,.1f}"
    return str(value)


def ours(shown: Shown) -> str:
    """A claim's own numbers: '1.748', '65%', a question's 'h4 (val_loss 1.738), runner-up h2 (1.740)'; '-' where
    something it names was not run, '' where it shows nothing."""
    if shown.not_run:
        return "-"
    if shown.ranked:
        (best, value), *rest = shown.ranked
        return f"{best} ({shown.metric} {fmt(value)})" + "".join(f", runner-up {v} ({fmt(x)})" for v, x in rest)
    return "" if shown.value is None else fmt(shown.value, shown.percent)


def mean_std(values, digits: int = 3) -> str:
    """'1.234 ± 0.010'; a single value has no spread to show, none at all is '-'."""
    v = [float(x) for x in values if x is not None and math.isfinite(float(x))]
    if not v:
        return "-"
    if len(v) == 1:
        return f"{v[0]:.{digits}f}"
    return f"{np.mean(v):.{digits}f} ± {np.std(v, ddof=1):.{digits}f}"


def wording(d: Difference) -> str:
    """Which way the 95% interval puts a difference: higher, lower, or that the seeds cannot tell."""
    if d.method == stats.SIGN:
        return f"holds on {d.held} of {d.n_a} seeds"
    if d.method == stats.SEPARATION:
        return "higher" if d.diff > 0 else "lower" if d.diff < 0 else CANNOT_TELL
    if d.low is None:
        return NO_INTERVAL
    if d.low <= 0 <= d.high:
        return CANNOT_TELL
    return "higher" if d.diff > 0 else "lower"


def reading(d: Difference, variant: str) -> str:
    """What the interval lets one say of a variant, in words."""
    said = wording(d)
    if said in (NO_INTERVAL, CANNOT_TELL) or d.method == stats.SIGN:
        return said
    return f"{variant} is {said}"


def interval(d: Difference, digits: int = 3, level: float | None = None) -> str:
    """'+0.041 (+0.012 to +0.070)' (the descriptive 95% interval), at another level '+0.041 (+0.002 to +0.080 at
    99.6%)'; where the windows' error was added, both standard errors ('; se seeds 0.010, windows 0.015'); an exact
    test, what it rests on ('+1.000 (holds on 3 of 3 seeds)'); the difference alone where there is no interval."""
    text = f"{d.diff:+.{digits}f}"
    if d.method == stats.SIGN:
        return f"{text} (holds on {d.held} of {d.n_a} seeds)"
    if d.method == stats.SEPARATION:
        return f"{text} (no spread on either side: {d.n_a} and {d.n_b} seeds)"
    if d.low is None:
        return text
    low, high = d.at(level) if level is not None else (d.low, d.high)
    parts = f"{low:+.{digits}f} to {high:+.{digits}f}"
    if level is not None:
        parts += f" at {percent(1 - level)}"
    if d.se_windows is not None:
        parts += f"; se seeds {d.se_seeds:.{digits}f}, windows {d.se_windows:.{digits}f}"
    return f"{text} ({parts})"


def percent(confidence: float) -> str:
    """A confidence level as the interval's name, its tail to two significant digits: 95%, 97.5%, 99.58%."""
    tail = np.format_float_positional(float(f"{(1 - confidence) * 100:.2g}"), trim="-")
    return f"{100 - float(tail):.{len(tail.partition('.')[2])}f}%"
