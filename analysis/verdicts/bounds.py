"""Where each metric can lie, and where an expression of metrics can: the range an interval is cut to, so that no
interval the table shows lies outside what its quantity can be (a share below 0, a loss below 0).

A share of positions, of weight or of words is in [0, 1]; a lead of one probability over another in [-1, 1]; a
loss, a count, a time, a length or a spread is at least 0; anything else (a knock-out's cost, which can be negative)
is unbounded. An expression's range is its interval arithmetic over its numbers' ranges (`Interval`), evaluated by
the checks' own evaluator with `FUNCTIONS` for abs, min and max.
"""
import fnmatch
import math
from dataclasses import dataclass

from lm.heads import table as heads

SHARE = (0.0, 1.0)
LEAD = (-1.0, 1.0)
NONNEGATIVE = (0.0, math.inf)
ANY = (-math.inf, math.inf)

# Each metric's range, by fnmatch pattern, the first that matches: the head statistics' shares from their own table.
RANGES = (
    *((name, SHARE) for name in sorted(heads.percent_metrics())),
    ("probe_lead_*", LEAD),
    ("heatmap_last_lead_*", LEAD),
    ("probe_p_*", SHARE),
    ("probe_top1_p", SHARE),
    ("heatmap_last_weight_*", SHARE),
    ("*_share", SHARE),
    ("*_share_*", SHARE),
    ("word_validity*", SHARE),
    ("short_word_validity", SHARE),
    ("worked_weight_*", SHARE),
    ("heads_attention_change", NONNEGATIVE),
    ("knockout_*", ANY),
    ("*loss*", NONNEGATIVE),
    ("n_params", NONNEGATIVE),
    ("predicted_*", NONNEGATIVE),
    ("heads_*_sum_*", NONNEGATIVE),
    ("heatmap_last_reads_*", NONNEGATIVE),
    ("ms_per_step", NONNEGATIVE),
    ("*_s", NONNEGATIVE),
    ("line_length*", NONNEGATIVE),
    ("init_score_std", NONNEGATIVE),
    ("init_raw_std", NONNEGATIVE),
    ("shuffle_change", NONNEGATIVE),
    ("flops_per_step", NONNEGATIVE),
    ("score_array_size", NONNEGATIVE),
)


def of(key: str) -> tuple[float, float]:
    """The range of a metric (ANY where none is known)."""
    return next((r for pattern, r in RANGES if fnmatch.fnmatchcase(key, pattern)), ANY)


@dataclass(frozen=True)
class Interval:
    """A closed range of numbers, with the arithmetic of ranges: what a sum, a difference, a product or a quotient
    of numbers in these ranges can be."""
    low: float
    high: float

    @staticmethod
    def of(x) -> "Interval":
        return x if isinstance(x, Interval) else Interval(float(x), float(x))

    def __add__(self, other):
        o = Interval.of(other)
        return Interval(self.low + o.low, self.high + o.high)

    __radd__ = __add__

    def __neg__(self):
        return Interval(-self.high, -self.low)

    def __sub__(self, other):
        return self + -Interval.of(other)

    def __rsub__(self, other):
        return Interval.of(other) + -self

    def __mul__(self, other):
        o = Interval.of(other)
        products = [_times(a, b) for a in (self.low, self.high) for b in (o.low, o.high)]
        return Interval(min(products), max(products))

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = Interval.of(other)
        if o.low <= 0 <= o.high:
            return Interval(-math.inf, math.inf)
        return self * Interval(1 / o.high, 1 / o.low)

    def __rtruediv__(self, other):
        return Interval.of(other) / self


def _times(a: float, b: float) -> float:
    """a × b with 0 × ∞ = 0: a bound at zero times an unbounded one stays at zero."""
    return 0.0 if a == 0 or b == 0 else a * b


def _abs(x):
    x = Interval.of(x)
    if x.low >= 0:
        return x
    if x.high <= 0:
        return -x
    return Interval(0.0, max(-x.low, x.high))


def _min(*xs):
    xs = [Interval.of(x) for x in xs]
    return Interval(min(x.low for x in xs), min(x.high for x in xs))


def _max(*xs):
    xs = [Interval.of(x) for x in xs]
    return Interval(max(x.low for x in xs), max(x.high for x in xs))


FUNCTIONS = {"abs": _abs, "min": _min, "max": _max}
