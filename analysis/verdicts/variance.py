"""The seeds' variance of a metric, shared across the variants that measure it: an empirical-Bayes prior per metric,
and each comparison's variance moderated by it (limma's moderated t, Smyth 2004).

A study trains few seeds of each variant, and a t-test on 3 seeds has 2 degrees of freedom: its critical value at a
family-wise level is in the tens. But every variant of every exercise measures the same metrics (the validation
loss, the head statistics, the probe, the samples' scores), each with a few seeds. Their sample variances say how a
metric's seed variance is spread across the variants: if alike, a comparison may borrow the others' degrees of
freedom; if not, little. The prior is fitted to them (`fit`: the scaled inverse chi-square whose mean log-variance and
spread of log-variances match theirs, by limma's method of moments), and a comparison's variance is the weighted mean
of the prior's and its own (`moderate`), on the prior's degrees of freedom plus its own. Where the variants' variances
differ more than sampling explains, the prior's degrees of freedom are few and the comparison leans on its own seeds;
where they differ less, many. The assumption: a variant's true seed variance of a metric is a draw from one scaled
inverse chi-square per metric (its calibration, with variances that differ more than that and with heavy tails:
analysis/calibration).

A metric is pooled by its name and phase (`phase`): the start of training (step 0: untrained models, whose spread is
the initialisation's), the curve's later steps, and the run's end, each apart. Groups whose seeds agree exactly (a
count, a constant) carry no variance to pool and are left out.
"""
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from scipy import optimize, special, stats

# The fewest groups (variants measuring a metric, at least 2 seeds each, some spread) a prior is fitted on: below it,
# a comparison is on its own seeds.
MIN_GROUPS = 4
# The prior's degrees of freedom are read at this one-sided confidence in the spread of the groups' log-variances, and
# never exceed the groups' own degrees of freedom together: with few groups, a prior worth little.
CONFIDENCE = 0.9
# A variance in either tail of its prior's prediction beyond this is its variant's own (`outlying`): at most this
# share of the comparisons the prior fits, each way.
OUTLIER = 0.001
# Subscripts that are positions in the window, not training steps: their 0 is the first position, not the start.
POSITIONAL = ("val_loss_at_position",)


class Phase(StrEnum):
    """When in a run a number was measured, for pooling: untrained, during training (a curve's steps, whose early
    points spread more), or at the end."""
    START = "start"
    CURVE = "curve"
    END = "end"


def phase(key: str, step: int | None) -> Phase:
    if step is None or key.startswith(POSITIONAL):
        return Phase.END
    return Phase.START if step == 0 else Phase.CURVE


@dataclass(frozen=True)
class Prior:
    """A metric's prior for the seeds' variance: a scaled inverse chi-square with `df` degrees of freedom about `var`
    (df inf: every variant's variance is `var`; df 0: no prior), fitted on `groups` variants."""
    df: float = 0.0
    var: float = 0.0
    groups: int = 0


NONE = Prior()


def fit(variances: Iterable[float], dfs: Iterable[float], owners: Iterable | None = None) -> Prior:
    """The prior of sample variances `variances` on `dfs` degrees of freedom each (limma's fitFDist, by moments of
    the log-variances): E log s² = log s0² + ψ(d0/2) − log(d0/2) + log(d/2) − ψ(d/2), var log s² = ψ'(d0/2) + ψ'(d/2),
    the spread read at its upper CONFIDENCE bound and d0 at most the groups' degrees of freedom together. Too few
    groups (MIN_GROUPS): no prior."""
    s2, d = np.asarray(list(variances), float), np.asarray(list(dfs), float)
    owner = list(owners) if owners is not None else list(range(len(s2)))
    keep = (s2 > 0) & np.isfinite(s2) & (d > 0)
    s2, d, owner = s2[keep], d[keep], [o for o, k in zip(owner, keep) if k]
    # a variant's curve gives a group at every step, the same seeds each time: they count as one variant's
    independent = {o: float(x) for o, x in zip(owner, d)}
    g = len(independent)
    if g < MIN_GROUPS:
        return NONE
    z = np.log(s2) - special.digamma(d / 2) + np.log(d / 2)
    mean = float(z.mean())
    # the log-variances' spread, at its upper CONFIDENCE bound on the independent groups' g - 1 degrees of freedom
    # (a curve's steps are as many numbers, on one variant's seeds): a few groups that happen to agree must not pass
    # for a prior worth many seeds
    observed = float(np.sum((z - mean) ** 2) / (len(z) - 1))
    spread = observed * (g - 1) / stats.chi2.ppf(1 - CONFIDENCE, g - 1) - float(np.mean(special.polygamma(1, d / 2)))
    d0 = 2 * _trigamma_inverse(spread) if spread > 0 else math.inf
    d0 = min(d0, sum(independent.values()))   # no more than the variants' own degrees of freedom together
    return Prior(d0, math.exp(mean + special.digamma(d0 / 2) - math.log(d0 / 2)), g)


def _trigamma_inverse(y: float) -> float:
    """x with ψ'(x) = y (y > 0): ψ' falls from infinity to 0, so a bracket outward from 1/y finds it."""
    lo, hi = 1e-8, max(1.0, 2 / y)
    while special.polygamma(1, hi) > y:
        hi *= 2
    return float(optimize.brentq(lambda x: special.polygamma(1, x) - y, lo, hi, xtol=1e-12, rtol=1e-10))


def moderate(s2: float, df: float, prior_var: float, prior_df: float) -> tuple[float, float]:
    """A variance s2 on df degrees of freedom moderated by a prior: (d0 s0² + d s²) / (d0 + d) on d0 + d degrees of
    freedom; with no prior (d0 0, or no prior variance), or one that calls s2 an outlier (`outlying`), s2 itself."""
    if prior_df <= 0 or prior_var <= 0 or outlying(s2, df, prior_var, prior_df):
        return s2, df
    if math.isinf(prior_df):
        return prior_var, math.inf
    return (prior_df * prior_var + df * s2) / (prior_df + df), prior_df + df


def outlying(s2: float, df: float, prior_var: float, prior_df: float) -> bool:
    """Whether a variance lies in either OUTLIER tail of what the prior predicts for it (s²/s0² on F(d, d0); d0 inf:
    chi²(d)/d): a variant whose seeds vary on another scale than the metric's others (a check that is 0 up to float
    rounding in one variant and of order 0.01 in the rest; a variant far noisier than its metric's others). The
    prior does not speak for it, and it is judged on its own seeds: robust empirical Bayes (Phipson et al. 2016) in
    its simplest form."""
    if s2 <= 0:   # seeds that agree exactly (a share at its bound): no draw from a spread to test, the prior stands
        return False
    ratio = s2 / prior_var
    below = special.chdtr(df, df * ratio) if math.isinf(prior_df) else special.fdtr(df, prior_df, ratio)
    return bool(below < OUTLIER or below > 1 - OUTLIER)


def combined(parts: Iterable[tuple[float, Prior | None]]) -> Prior:
    """The prior of a linear combination of numbers, given each one's weight and prior (None: a number with no
    spread, a constant, which adds nothing): its variance the weighted sum (the numbers taken as independent), its
    degrees of freedom the fewest of theirs. A number that varies with no prior leaves the combination none."""
    var, df, groups = 0.0, math.inf, math.inf
    for weight, prior in parts:
        if prior is None or weight == 0:
            continue
        if prior.df <= 0 or prior.var <= 0:
            return NONE
        var += weight ** 2 * prior.var
        df, groups = min(df, prior.df), min(groups, prior.groups)
    return Prior(df, var, int(groups)) if var > 0 else NONE


def priors(groups: Mapping[tuple[str, str], list]) -> dict[tuple[str, str], Prior]:
    """Each pooled metric's prior, from its groups' per-seed values: {(key, phase): [(its variant, values), ...]}
    (a bare list of values counts as a variant of its own)."""
    out = {}
    for pooled, rows in groups.items():
        found = []
        for i, row in enumerate(rows):
            owner, values = row if isinstance(row, tuple) else (i, row)
            v = np.asarray(list(values), float)
            v = v[np.isfinite(v)]
            if len(v) >= 2:
                found.append((owner, v))
        out[pooled] = fit([float(np.var(v, ddof=1)) for _, v in found], [len(v) - 1 for _, v in found],
                          [o for o, _ in found])
    return out
