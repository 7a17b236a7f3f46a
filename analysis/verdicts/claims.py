"""A claim's comparisons against our numbers: each one's test, p and verdict, and a claim's verdict from them.

A lookup is `lookup(variant, key, step)`: the mean over seeds of a metric's final value (step None), of the
value logged at `step`, or a tag's most common value; it raises lm.settings.exercises.NotRun for what was not run. Given
also `seeds(variant, key, step)`, the same number per seed ({seed: value}, a tag's per seed too; None where there
is no per-seed form), every comparison in a check (`a < b`, `a < b - 0.5`, `x >= 0.9`, `a[63] < b[15]`, each pair
of a chain `a > b > c`) gets its margin, the amount by which it holds, per seed, and the two-sided p of "no margin":
- paired t over the per-seed margins where every variant it reads is of one exercise and has the same seeds (the
  same seed sees the same batches in the same order), one-sample t where it reads one variant;
- Welch's t where one side's variants and the other's were run with different seeds, or in different exercises;
- where the seeds all agree (a count that ties, a share at 100%, a tag), no t-test has a spread to go on: the exact
  sign test over the seeds of whether it holds (and `==`, `!=` always: a count, a tag), or for two separate samples
  with no spread the permutation test of their separation; at 3 seeds their least p is 0.25 and 0.1, so such a
  comparison stays open until seeds are added.
A band `abs(x - v) < b` is read on the mean, as `v - b < x < v + b`: per seed it would test the seeds' mean absolute
deviation, which grows with their spread, so that more seeds made "not reproduced" surer at the true value.
Where the store gives each validation window's value (`windows(variant, key, step)`), the windows' error of the margin
is added to the seeds', paired window by window; a metric scored on fixed windows without them is said to be so.
A lesson's single number (a Prediction) is judged both ways against our prediction interval for one more run, the
evaluation's own noise included: reproduced by the two one-sided tests within the claim's delta, not reproduced
outside the interval (decision.py).
The level, the family, the looks and the fewest seeds for a firm verdict are decision.py's: below that many seeds,
or on the means alone, a comparison is indicative. Each kind of claim is judged from these by its entry in
claim_kinds.py, on its own (raw p); claims_table.py judges the table, adjusting each family's p, and settles each
claim again (settle). `and` needs every part, `or` one; a chain is `and`. A finding gets its intervals, no
verdict. Numbers and outcomes only: what a verdict says in words is analysis/report/verdict_text.py's, the seeds an
open claim needs analysis/planning.py's.
"""
import ast
import copy
import functools
import math
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from scipy import special

from analysis.verdicts import bounds, decision, stats, variance
from analysis.verdicts.decision import Outcome
from lm.heads import table as heads
from lm.settings.exercises import NotRun, evaluate, terms, tree

REPRODUCED, NOT_REPRODUCED, WITHIN_NOISE = Outcome.REPRODUCED, Outcome.NOT_REPRODUCED, Outcome.WITHIN_NOISE
NOT_RUN, NOT_APPLICABLE, NOT_MEASURED = Outcome.NOT_RUN, Outcome.NOT_APPLICABLE, Outcome.NOT_MEASURED
INDICATIVE, FINDING = Outcome.INDICATIVE, Outcome.FINDING
VERDICTS = (REPRODUCED, WITHIN_NOISE, NOT_REPRODUCED, INDICATIVE, FINDING, NOT_RUN, NOT_APPLICABLE, NOT_MEASURED)
MEANS = "means only"
ONE_SEED = stats.ONE_SEED
PREDICTION = stats.PREDICTION
DETERMINISTIC = "deterministic"
# Shares of 1, shown as percentages like the lessons give them: the head statistics' from their table.
PERCENT = {"probe_top1_p", "word_validity", "word_validity_stripped", "real_word_share", "speaker_line_share",
           "speaker_line_share_train", *heads.percent_metrics()}
ORDERS = {ast.Gt: (False, True), ast.GtE: (False, False), ast.Lt: (True, True), ast.LtE: (True, False)}
# (whether the margin is right − left, whether the comparison is strict)
SYMBOLS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}
SHORT = {ast.Gt: ">", ast.GtE: "≥", ast.Lt: "<", ast.LtE: "≤"}
MIRROR = {ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.LtE: ast.GtE}
# A check on arrays, one number a seed or a window: abs, min and max elementwise.
ELEMENTWISE = {"abs": np.abs, "min": lambda *x: functools.reduce(np.minimum, x),
               "max": lambda *x: functools.reduce(np.maximum, x)}
# Metrics scored on windows of text (the validation windows, or the training text's for train_eval_loss): an
# interval over seeds holds for the windows they were scored on. Every run reads the same windows; where the store
# gives each window's value (ExerciseResults.windows), the windows' error of a difference is added, paired window by
# window; where it does not, the note says that the interval is for those fixed windows.
WINDOW_SCORED = ("val_loss", "honest_val_loss", "train_eval_loss", "knockout_", "heads_", "shuffle_change", "init_")


# The text of a node of a check's (shared, cached) tree: once per node.
unparse = functools.lru_cache(maxsize=16384)(ast.unparse)


def window_scored(key: str) -> bool:
    return key.startswith(WINDOW_SCORED)


@dataclass
class Comparison:
    """One pair of a check: whether it holds on the means, and its margin's test (positive: holds)."""
    text: str
    holds: bool
    difference: stats.Difference | None = None
    label: str = ""             # short: "≥ 0.9" against a constant, else the pair as written
    method: str = MEANS
    strict: bool = True
    seeds: dict[str, int] = field(default_factory=dict)
    flip: bool = False                  # the margin is right − left
    sides: tuple[str, str] = ("", "")   # the left and right expressions, for a finding's wording
    fixed_windows: tuple[str, ...] = ()  # window-scored numbers it reads whose per-window values are not logged
    family: str | None = None           # set by the table: the family it is a member of ("table", "control")
    p_adjusted: float | None = None     # set by the table for a member of a family
    level: float | None = None          # set by the table: the raw two-sided level its interval is shown at
    plan: float | None = None           # set by the table: the raw level its next look needs, at best
    looks: dict[int, float] | None = None   # set by the table: the raw p at each look reached ({seeds: p})

    @property
    def n(self) -> int | None:
        """The fewest seeds of a variant it reads; None where it has no per-seed form."""
        return min(self.seeds.values()) if self.seeds else None

    @property
    def raw_p(self) -> float | None:
        """The two-sided p of this look's seeds; None where there is no test, or fewer seeds than a verdict needs."""
        d = self.difference
        if d is None or d.p is None or (self.n or 0) < decision.MIN_SEEDS:
            return None
        return d.p

    @property
    def p(self) -> float | None:
        """The sequential p over the looks reached (decision.sequential_p); None where there is no test."""
        raw = self.raw_p
        if raw is None:
            return None
        return decision.sequential_p(self.looks or {decision.look(self.n or 0): raw})

    @property
    def verdict(self) -> Outcome:
        d = self.difference
        if d is None or d.p is None or (self.n or 0) < decision.MIN_SEEDS:
            return INDICATIVE
        return decision.outcome(d.direction, self.p if self.p_adjusted is None else self.p_adjusted)


class Evaluation(StrEnum):
    """Where a lesson's single number's evaluation noise departs from the plain case (our number's per-window values
    logged at its step, the lesson's window count stated): what the report says of it."""
    NOT_LOGGED = "no per-window values: the evaluation's noise left out"
    FINAL_STANDS_IN = "the final validation's per-window spread stands for this step's"
    VALIDATION_STANDS_IN = "the final validation's per-window spread stands for this number's"
    FIXED_WINDOWS = "scored on as many fixed windows as the lesson's"
    LESSON_UNSTATED = "the lesson's own evaluation not stated: its noise left out"


@dataclass
class Prediction(Comparison):
    """A lesson's single number, one draw of the lesson's setup, against our prediction interval for one more run of
    ours: the seeds' variance (moderated by its prior) times 1 + 1/n, and the evaluation's noise (tau), in squares.
    Reproduced when it lies within `delta` of our mean by the two one-sided tests (an equivalence: our runs could
    tell a number delta away); not reproduced when it lies outside the interval (it is no draw of our setup);
    within noise otherwise."""
    value: float = 0.0
    values: list[float] = field(default_factory=list)
    tau: float = 0.0            # the evaluation's noise: the lesson's windows', and our mean's where logged
    delta: float = 0.0          # the difference from the lesson's number that would matter (the claim's `delta`)
    evaluation: tuple[Evaluation, ...] = ()   # where the evaluation's noise departs from the plain case
    number: str = ""            # the number judged, as the claim's `ours` names it
    prior: variance.Prior = variance.NONE
    range: tuple[float, float] = bounds.ANY     # where the number can lie

    def __post_init__(self):
        self.difference = prediction(self.value, self.values, self.tau, self.delta, self.prior)

    def band(self, level: float) -> tuple[float, float] | None:
        """Our prediction interval for one more run at the two-sided `level`, cut to the number's range."""
        d = self.difference
        if d is None or d.p is None or d.exact:
            return None
        mean = float(np.mean(self.values))
        half = float(decision.t_quantile(1 - level / 2, d.df)) * d.se
        return stats.clip(mean - half, mean + half, self.range)


def prediction(value: float, values: list[float], tau: float, delta: float,
               prior: variance.Prior = variance.NONE) -> stats.Difference | None:
    """The test of a lesson's single number against our per-seed values. D = our mean - the number, on the standard
    error of one more run (the seeds' moderated variance times 1 + 1/n, and the evaluation's noise tau taken as
    known: stats.with_windows says why not Welch-Satterthwaite's), t on the seeds' degrees of freedom plus the
    prior's. Two p: that of "it is a draw of our setup" (|D| = 0, two-sided), whose rejection is "not reproduced",
    and the equivalence's (the larger of the two one-sided p of D >= delta and D <= -delta), whose rejection is
    "reproduced"; the comparison carries the smaller, and the verdict it is for (`toward`). At any truth at most one
    of the two verdicts is false, and each is reached only by its own test's p. The margin shown is delta - |D|.
    Seeds that all agree with no prior and no evaluation noise: the sign test over seeds of whether each lies
    within delta."""
    n = len(values)
    if not n:
        return None
    x = np.asarray(values, float)
    D = float(x.mean()) - value
    d = stats.Difference(delta - abs(D), n_a=n, n_b=n, method=PREDICTION, prior=prior)
    if n < 2:
        return d
    own = float(x.var(ddof=1))
    if own <= (1e-12 * max(1.0, abs(float(x.mean())))) ** 2 and tau <= 0 and prior.var <= 0:
        return stats.sign(d, int(np.sum(np.abs(x - value) < delta)), n)
    s2, df = variance.moderate(own, n - 1, prior.var, prior.df)
    d.sd = math.sqrt(s2)
    seeds = s2 * (1 + 1 / n)
    d.se_seeds = math.sqrt(seeds)
    d.se = math.sqrt(seeds + tau ** 2)
    d.df = df
    differs = float(decision.t_p(D, d.se, df))
    # the equivalence: H0 D >= delta (its p the lower tail at (D - delta) / se), H0 D <= -delta (upper tail)
    within = max(float(special.stdtr(df, (D - delta) / d.se)), float(special.stdtr(df, -(D + delta) / d.se))) \
        if delta > 0 else 1.0
    d.p, d.toward = (within, 1.0) if within < differs else (differs, -1.0)
    d.low, d.high = d.at(1 - stats.CONFIDENCE)
    return d


@dataclass(frozen=True)
class Shown:
    """What a claim shows as ours, as numbers: its `ours` expression's value (a number, several, a tag's text), and
    whether they are shares of 1 (PERCENT); a question's answer: the metric and the variants it ranks, the best
    first, each with its value. Nothing shown (no `ours`) is Shown(); something it names not run, not_run."""
    value: object = None
    percent: bool = False
    metric: str = ""
    ranked: tuple[tuple[str, float], ...] = ()
    not_run: bool = False


@dataclass
class Verdict:
    text: str
    lesson: str
    ours: Shown
    verdict: str
    remark: str = ""        # what the judging itself says: why it was not run, a question's missing variants
    comparisons: list[Comparison] = field(default_factory=list)
    finding: bool = False
    check: str = ""         # what the comparisons came from, to settle the verdict again after adjustment
    deterministic: bool = False   # a deterministic check: judged on each seed, outside the family
    control: bool = False   # an A/A control: its comparisons in the control's own family, any firm one a false one
    looked: tuple[int, int] | None = None  # set by the table: the last look's seeds, and the most seeds a variant had


def shown(expr: str, lookup) -> Shown:
    """The value of an `ours` expression, and whether every metric it reads is a share."""
    keys = set()

    def recording(variant, key, step):
        keys.add(key)
        return lookup(variant, key, step)

    try:
        value = evaluate(expr, recording)
    except NotRun:
        return Shown(not_run=True)
    return Shown(value, percent=bool(keys) and keys <= PERCENT)


# --- a check's shape -------------------------------------------------------------------------------------
class _Bands(ast.NodeTransformer):
    """`abs(E) < b` as `-b < E < b`, and `abs(E) > b` as `E > b or E < -b` (either side, `<=`, `>=` alike): a band
    on the mean rather than on each seed."""

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if _is_abs(right) and not _is_abs(left):
            left, op, right = right, MIRROR.get(type(op), type(op))(), left
        if not _is_abs(left) or type(op) not in ORDERS:
            return node
        inner, neg = left.args[0], ast.UnaryOp(ast.USub(), copy.deepcopy(right))
        if type(op) in (ast.Lt, ast.LtE):
            return ast.Compare(neg, [type(op)(), type(op)()], [inner, right])
        return ast.BoolOp(ast.Or(), [ast.Compare(inner, [type(op)()], [right]),
                                     ast.Compare(copy.deepcopy(inner), [MIRROR[type(op)]()], [neg])])


def _is_abs(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "abs" and \
        len(node.args) == 1


@functools.lru_cache(maxsize=4096)
def shape(check: str) -> ast.Expression:
    """A check's syntax tree as it is judged, its bands on the mean (_Bands); shared, not to be changed."""
    return ast.fix_missing_locations(_Bands().visit(copy.deepcopy(tree(check))))


def count(check: str) -> int:
    """How many comparisons a check holds (collect's), from its text alone: the family counts them before any run."""
    def walk(node) -> int:
        match node:
            case ast.BoolOp(values=vs):
                return sum(walk(n) for n in vs)
            case ast.UnaryOp(op=ast.Not(), operand=a):
                return walk(a)
            case ast.Compare(ops=ops):
                return len(ops)
        return 1
    return walk(shape(check).body)


# --- settling a verdict ----------------------------------------------------------------------------------
def settle(v: Verdict) -> None:
    """The verdict from the comparisons as they stand (p adjusted or not)."""
    if not v.comparisons:
        return
    if v.control or v.finding:
        v.verdict = FINDING
    elif v.deterministic:
        v.verdict = REPRODUCED if all(c.holds for c in v.comparisons) else NOT_REPRODUCED
    elif v.check:
        v.verdict = _combine(shape(v.check).body, iter(v.comparisons))
    else:
        v.verdict = _all([c.verdict for c in v.comparisons])


def collect(node, lookup, seeds, out: list, windows=None, priors=None) -> None:
    """Every comparison of a check's syntax tree (shape's), in the order _combine reads them."""
    match node:
        case ast.BoolOp(values=vs):
            for n in vs:
                collect(n, lookup, seeds, out, windows, priors)
            return
        case ast.UnaryOp(op=ast.Not(), operand=a):
            collect(a, lookup, seeds, out, windows, priors)
            return
        case ast.Compare(left=left, ops=ops, comparators=cs):
            a = left
            for op, b in zip(ops, cs):
                out.append(compare(a, op, b, lookup, seeds, windows, priors))
                a = b
            return
    out.append(Comparison(unparse(node), bool(evaluate(unparse(node), lookup)), label=unparse(node)))


def _combine(node, found) -> Outcome:
    """The verdict of a node from its comparisons' (taken from `found` in collect's order)."""
    match node:
        case ast.BoolOp(op=ast.And(), values=vs):
            return _all([_combine(n, found) for n in vs])
        case ast.BoolOp(op=ast.Or(), values=vs):
            parts = [_combine(n, found) for n in vs]
            if REPRODUCED in parts:
                return REPRODUCED
            if set(parts) == {NOT_REPRODUCED}:
                return NOT_REPRODUCED
            return INDICATIVE if INDICATIVE in parts else WITHIN_NOISE
        case ast.UnaryOp(op=ast.Not(), operand=a):
            flip = {REPRODUCED: NOT_REPRODUCED, NOT_REPRODUCED: REPRODUCED}
            r = _combine(a, found)
            return flip.get(r, r)
        case ast.Compare(ops=ops):
            return _all([next(found).verdict for _ in ops])
    return next(found).verdict


def _all(parts: list[Outcome]) -> Outcome:
    """A chain or an `and`: reproduced if every part is, not reproduced if any is, indicative if any part is (and
    none is not reproduced), within seed noise otherwise."""
    if NOT_REPRODUCED in parts:
        return NOT_REPRODUCED
    if all(p == REPRODUCED for p in parts):
        return REPRODUCED
    return INDICATIVE if INDICATIVE in parts else WITHIN_NOISE


# --- one comparison --------------------------------------------------------------------------------------
def compare(a, op, b, lookup, seeds, windows=None, priors=None) -> Comparison:
    """One pair `a op b`: whether it holds on the means, and where there are seeds, its margin's test, the seeds'
    variance moderated by the priors of the numbers it reads (`priors(variant, key, step)`: variance.Prior, None
    for a number with no spread to pool)."""
    text = f"{unparse(a)} {SYMBOLS[type(op)]} {unparse(b)}"
    holds = bool(evaluate(text, lookup))
    ta, tb = terms(a), terms(b)
    per = {t: seeds(*t) for t in dict.fromkeys(ta + tb)} if seeds is not None else {}
    have_seeds = bool(per) and all(per.values())
    by_variant = {}
    for (variant, _, _), p in (per.items() if have_seeds else ()):
        by_variant[variant] = by_variant.get(variant, set(p)) & set(p)
    common = set.intersection(*by_variant.values()) if by_variant else set()
    if type(op) not in ORDERS:  # == and != (a count, a tag): on each seed, the sign test over them
        c = Comparison(text, holds, label=text)
        if have_seeds and common:
            held = [bool(evaluate(text, _at(per, s))) for s in sorted(common)]
            c.difference = stats.sign(stats.Difference(float(np.mean(held)) - 0.5), sum(held), len(held))
            c.seeds, c.method = {variant: len(common) for variant in by_variant}, stats.SIGN
        return c
    flip, strict = ORDERS[type(op)]
    if not tb:  # against a constant: "≥ 0.9"
        label = f"{SHORT[type(op)]} {unparse(b)}"
    elif not ta:
        label = f"{SHORT[MIRROR[type(op)]]} {unparse(a)}"
    else:
        label = text
    left, right = unparse(a), unparse(b)
    c = Comparison(text, holds, strict=strict, label=label, flip=flip, sides=(left, right))
    if not have_seeds or any(isinstance(x, str) for p in per.values() for x in p.values()):  # a tag: the means
        return c
    c.seeds = {variant: len(s) for variant, s in by_variant.items()}
    one_exercise = len({v.split(":")[0] if ":" in v else "" for v in by_variant}) == 1
    used = {}   # the seeds each variant's values were read at
    if one_exercise and all(s == common for s in by_variant.values()) and common:
        order = sorted(common)
        used = dict.fromkeys(by_variant, order)
        xa, xb = (evaluate(side, _arrays(per, order), ELEMENTWISE) for side in (left, right))
        margin = np.asarray(xb - xa if flip else xa - xb, float) * np.ones(len(order))
        slopes = _slopes(left, right, flip, per, used)
        prior = variance.combined(_weighted(ta + tb, slopes, per, priors))
        c.difference = stats.one_sample(margin, 0.0, stats.PAIRED if len(by_variant) > 1 else stats.ONE_SAMPLE,
                                        strict, prior)
    else:
        va, vb = {t[0] for t in ta}, {t[0] for t in tb}
        sa = set.intersection(*(by_variant[x] for x in va)) if va else set()
        sb = set.intersection(*(by_variant[x] for x in vb)) if vb else set()
        if not (va and vb and sa and sb) or va & vb:  # no two separate samples to set side by side
            return c
        used = {**dict.fromkeys(va, sorted(sa)), **dict.fromkeys(vb, sorted(sb))}
        xa = np.asarray(evaluate(left, _arrays(per, sorted(sa)), ELEMENTWISE), float) * np.ones(len(sa))
        xb = np.asarray(evaluate(right, _arrays(per, sorted(sb)), ELEMENTWISE), float) * np.ones(len(sb))
        slopes = _slopes(left, right, flip, per, used)
        pa = variance.combined(_weighted(ta, slopes, per, priors))
        pb = variance.combined(_weighted(tb, slopes, per, priors))
        c.difference = stats.welch(xb, xa, pb, pa) if flip else stats.welch(xa, xb, pa, pb)
    d = stats.bounded(c.difference, _range(left, right, flip))
    c.method = d.method if d.low is not None or d.exact else ONE_SEED
    windowed = [t for t in dict.fromkeys(ta + tb) if window_scored(t[1])]
    if windowed and not d.exact and d.low is not None:
        se = _windows(windowed, slopes, used, windows)
        if se is None:
            c.fixed_windows = tuple(dict.fromkeys(_name(t) for t in windowed))
        else:
            c.difference = stats.with_windows(d, se)
    return c


def _slopes(left: str, right: str, flip: bool, per: dict, used: dict) -> dict:
    """The margin's slope in each number it reads, at the seeds' means: a linear margin's own coefficients, the
    delta method's otherwise."""
    means = {t: float(np.mean([per[t][s] for s in used[t[0]]])) for t in per}

    def margin(at: dict) -> float:
        look = lambda variant, key, step: at[variant, key, step]  # noqa: E731
        xa, xb = evaluate(left, look, ELEMENTWISE), evaluate(right, look, ELEMENTWISE)
        return float(xb - xa if flip else xa - xb)

    base, slopes = margin(means), {}
    for t in means:
        h = 1e-6 * max(1.0, abs(means[t]))
        slopes[t] = (margin({**means, t: means[t] + h}) - base) / h
    return slopes


def _weighted(named, slopes: dict, per: dict, priors) -> list:
    """(slope, prior) of each number named: a number whose seeds agree and that has no prior is a constant (None)."""
    out = []
    for t in dict.fromkeys(named):
        prior = priors(*t) if priors is not None else None
        varies = len({float(x) for x in per[t].values()}) > 1
        out.append((slopes[t], prior if prior is not None and (prior.var > 0 or varies) else
                    (variance.NONE if varies else None)))
    return out


def _range(left: str, right: str, flip: bool) -> tuple[float, float]:
    """Where the margin can lie, from the ranges of the numbers it reads (bounds.of), by interval arithmetic."""
    def look(variant, key, step):
        return bounds.Interval(*bounds.of(key))
    try:
        xa, xb = (evaluate(side, look, bounds.FUNCTIONS) for side in (left, right))
        m = xb - xa if flip else xa - xb
        m = m if isinstance(m, bounds.Interval) else bounds.Interval(float(m), float(m))
    except (TypeError, ValueError, ZeroDivisionError):
        return -math.inf, math.inf
    return m.low, m.high


def _windows(windowed, slopes: dict, used: dict, windows) -> float | None:
    """The windows' standard error of a margin (stats.paired_windows_se): each windowed term's per-window values
    averaged over the seeds the comparison read, weighted by the margin's slope in that term (a linear margin's own
    coefficients; the delta method otherwise), windows of the same length taken as the same windows. None when a
    windowed term's per-window values are not logged."""
    if windows is None:
        return None
    arrays = {}
    for t in windowed:
        got = windows(*t) or {}
        rows = [np.asarray(got[s], float) for s in used[t[0]] if s in got]
        if len(rows) != len(used[t[0]]) or len({len(r) for r in rows}) != 1:
            return None
        arrays[t] = np.mean(rows, axis=0)
    groups = {}
    for t, x in arrays.items():
        groups[len(x)] = groups.get(len(x), 0.0) + slopes[t] * x
    return stats.paired_windows_se(list(groups.values()))


def _name(t: tuple[str, str, int | None]) -> str:
    variant, key, step = t
    return f"{variant}.{key}" + (f"[{step}]" if step is not None else "")


def _at(per: dict, seed: int):
    return lambda variant, key, step: per[variant, key, step][seed]


def _arrays(per: dict, order: list[int]):
    """A lookup giving each number as an array over the seeds in `order`."""
    return lambda variant, key, step: np.array([per[variant, key, step][s] for s in order], float)
