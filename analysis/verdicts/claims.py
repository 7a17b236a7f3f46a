"""A claim's comparisons against our numbers: each one's interval, p and verdict, and a claim's verdict from them.

A lookup is `lookup(variant, key, step)`: the mean over seeds of a metric's final value (step None), of the
value logged at `step`, or a tag's most common value; it raises lm.spec.exercises.NotRun for what was not run. Given
also `seeds(variant, key, step)`, the same number per seed ({seed: value}, a tag's per seed too; None where there
is no per-seed form), every comparison in a check (`a < b`, `a < b - 0.5`, `x >= 0.9`, `a[63] < b[15]`, each pair
of a chain `a > b > c`) gets the 95% interval of its margin, the amount by which it holds, and the two-sided p of
"no margin":
- paired t over the per-seed margins where every variant it reads is of one exercise and has the same seeds (the
  same seed sees the same batches in the same order), one-sample t where it reads one variant against a constant;
- Welch's t where one side's variants and the other's were run with different seeds, or in different exercises;
- `==` and `!=` (a count, a tag) on each seed: reproduced when every seed's holds, not when none does.
A lesson's single number (a Prediction) is reproduced when it lies in our prediction interval for one more run,
widened by the project's tolerance (decision.py). The rule that turns p into a verdict, the level, the family the
table corrects over and the fewest seeds for a firm verdict are decision.py's: below that many seeds a comparison is
indicative. Each kind of claim is judged from these by its entry in claim_kinds.py, on its own (raw p);
claims_table.py judges the table, adjusting the family's p together, and settles each claim again (settle). `and`
needs every part, `or` one; a chain is `and`. A finding gets its intervals and a wording, no verdict.
"""
import ast
from dataclasses import dataclass, field

from analysis.verdicts import decision, stats
from analysis.verdicts.decision import Outcome
from lm.heads import table as heads
from lm.spec.exercises import NotRun, evaluate, terms, tree

REPRODUCED, NOT_REPRODUCED, WITHIN_NOISE = Outcome.REPRODUCED, Outcome.NOT_REPRODUCED, Outcome.WITHIN_NOISE
NOT_RUN, NOT_APPLICABLE, NOT_MEASURED = Outcome.NOT_RUN, Outcome.NOT_APPLICABLE, Outcome.NOT_MEASURED
INDICATIVE, FINDING = Outcome.INDICATIVE, Outcome.FINDING
VERDICTS = (REPRODUCED, WITHIN_NOISE, NOT_REPRODUCED, INDICATIVE, FINDING, NOT_RUN, NOT_APPLICABLE, NOT_MEASURED)
EXACT, MEANS, ONE_SEED, PER_SEED = "exact", "means only", "one seed", "each seed"
PREDICTION = "prediction interval"
# Shares of 1, shown as percentages like the lessons give them: the head statistics' from their table.
PERCENT = {"probe_top1_p", "word_validity", "word_validity_stripped", "real_word_share", "speaker_line_share",
           "speaker_line_share_train", *heads.percent_metrics()}
ORDERS = {ast.Gt: (False, True), ast.GtE: (False, False), ast.Lt: (True, True), ast.LtE: (True, False)}
# (whether the margin is right − left, whether the comparison is strict)
SYMBOLS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}
SHORT = {ast.Gt: ">", ast.GtE: "≥", ast.Lt: "<", ast.LtE: "≤"}
MIRROR = {ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.LtE: ast.GtE}
# Metrics scored on the fixed validation windows, and the standard error over those windows each run logs with them
# (lm/measures/probes.py): the same windows for every seed, so their error is added to the seeds' in every interval.
WINDOWED = {"val_loss": "val_loss_se", "val_loss_at_position": "val_loss_at_position_se"}


@dataclass
class Comparison:
    """One pair of a check: whether it holds on the means, and the interval of its margin (positive: holds)."""
    text: str
    holds: bool
    difference: stats.Difference | None = None
    label: str = ""             # short: "≥ 0.9" against a constant, else the pair as written
    method: str = MEANS
    strict: bool = True
    seeds: dict[str, int] = field(default_factory=dict)
    held: list[bool] | None = None      # `==`, `!=`: whether it holds on each seed
    flip: bool = False                  # the margin is right − left
    sides: tuple[str, str] = ("", "")   # the left and right expressions, for a finding's wording
    p_adjusted: float | None = None     # set by the table (claims_table.py) for a member of its family
    looks: dict[int, float] | None = None   # set by the table: the raw p at each look reached ({seeds: p})

    @property
    def n(self) -> int | None:
        """The fewest seeds of a variant it reads; None where it has no per-seed form."""
        return min(self.seeds.values()) if self.seeds else None

    @property
    def raw_p(self) -> float | None:
        """The two-sided p of this look's seeds, for a comparison in the table's family (decision.FAMILY); else
        None."""
        d = self.difference
        if d is None or d.p is None or d.exact or (self.n or 0) < decision.MIN_SEEDS:
            return None
        return d.p

    @property
    def p(self) -> float | None:
        """The sequential p over the looks reached (decision.sequential_p), the family's member; None outside it."""
        raw = self.raw_p
        if raw is None:
            return None
        return decision.sequential_p(self.looks or {decision.look(self.n or 0): raw})

    @property
    def verdict(self) -> Outcome:
        if self.held is not None:
            if len(self.held) < decision.MIN_SEEDS:
                return INDICATIVE
            return REPRODUCED if all(self.held) else NOT_REPRODUCED if not any(self.held) else WITHIN_NOISE
        d = self.difference
        if d is None:
            return REPRODUCED if self.holds else NOT_REPRODUCED
        if (self.n or 0) < decision.MIN_SEEDS:
            return INDICATIVE
        if d.exact:
            if d.low > 0 or (not self.strict and d.low >= 0):
                return REPRODUCED
            return NOT_REPRODUCED
        return decision.outcome(d.diff, self.p if self.p_adjusted is None else self.p_adjusted)

    @property
    def interval(self) -> str:
        if self.held is not None:
            return f"{sum(self.held)} of {len(self.held)} seeds"
        return stats.interval(self.difference) if self.difference is not None else ""

    @property
    def wording(self) -> str:
        """A finding's reading: the left side higher or lower than the right, or undetermined, at 95%."""
        d = self.difference
        left, right = self.sides
        if d is None or d.low is None:
            return f"{left} against {right}: undetermined ({self.n or 1} seed{'s' * ((self.n or 1) != 1)})"
        low, high = (-d.high, -d.low) if self.flip else (d.low, d.high)   # of left − right
        if low > 0 or high < 0:
            return f"{left} is {'higher' if low > 0 else 'lower'} than {right}"
        return f"{left} against {right}: undetermined"


@dataclass
class Prediction(Comparison):
    """A lesson's single number against our prediction interval for one more run of ours (decision.py)."""
    value: float = 0.0
    values: list[float] = field(default_factory=list)

    @property
    def raw_p(self) -> float | None:
        if len(self.values) < decision.MIN_SEEDS:
            return None
        return decision.prediction_p(self.value, *self._moments())

    @property
    def verdict(self) -> Outcome:
        if len(self.values) < decision.MIN_SEEDS:
            return INDICATIVE
        p = self.p if self.p_adjusted is None else self.p_adjusted
        return NOT_REPRODUCED if p < decision.ALPHA else REPRODUCED

    @property
    def interval(self) -> str:
        if len(self.values) < 2:
            return ""
        mean, sd, n = self._moments()
        low, high = decision.prediction_interval(mean, sd, n, self.value)
        return f"{fmt(mean)} ({fmt(low)} to {fmt(high)})"

    def _moments(self) -> tuple[float, float, int]:
        x = [float(v) for v in self.values]
        n = len(x)
        mean = sum(x) / n
        sd = (sum((v - mean) ** 2 for v in x) / (n - 1)) ** 0.5 if n > 1 else 0.0
        return mean, sd, n


@dataclass
class Verdict:
    text: str
    lesson: str
    ours: str
    verdict: str
    note: str = ""
    interval: str = ""      # each comparison's margin with its 95% interval ("; " between pairs of a chain)
    method: str = ""        # the interval's method: paired t, Welch t, one-sample t, exact, means only, one seed
    seeds: str = ""         # seeds per variant: "3", or "base 3, nopos 2" when the counts differ
    comparisons: list[Comparison] = field(default_factory=list)
    finding: bool = False
    check: str = ""         # what the comparisons came from, to settle the verdict again after adjustment
    wording: str = ""       # a finding's reading, "; " between comparisons
    looked: tuple[int, int] | None = None  # set by the table: the last look's seeds, and the most seeds a variant had

    @property
    def label(self) -> str:
        """The verdict column's words: 'indicative (1 seed)', 'finding: h4 lower than h1', or the verdict."""
        if self.verdict == INDICATIVE:
            return decision.indicative(min((c.n for c in self.comparisons if c.n is not None), default=1))
        if self.verdict == FINDING:
            return f"{FINDING}: {self.wording}" if self.wording else str(FINDING)
        return str(self.verdict)

    @property
    def p(self) -> str:
        """The family members' raw p at the last look, '; ' between comparisons."""
        return "; ".join(f"{c.raw_p:.2g}" for c in self.comparisons if c.raw_p is not None)

    @property
    def p_adjusted(self) -> str:
        return "; ".join(f"{c.p_adjusted:.2g}" for c in self.comparisons if c.p_adjusted is not None)


def fmt(value, percent: bool = False) -> str:
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


def show(expr: str, lookup) -> str:
    """The value of an `ours` expression, formatted; '-' when something it names was not run."""
    keys = set()

    def recording(variant, key, step):
        keys.add(key)
        return lookup(variant, key, step)

    try:
        value = evaluate(expr, recording)
    except NotRun:
        return "-"
    return fmt(value, percent=bool(keys) and keys <= PERCENT)


def settle(v: Verdict) -> None:
    """The verdict, interval, method, seeds and note from the comparisons as they stand (p adjusted or not)."""
    if not v.comparisons:
        return
    if v.finding:
        v.verdict = FINDING
        v.wording = "; ".join(c.wording for c in v.comparisons if c.method != EXACT)
    elif v.check:
        v.verdict = _combine(tree(v.check).body, iter(v.comparisons))
    else:
        v.verdict = v.comparisons[0].verdict
    _describe(v, v.check)


def collect(node, lookup, seeds, out: list) -> None:
    """Every comparison of a check's syntax tree, in the order _combine reads them."""
    match node:
        case ast.BoolOp(values=vs):
            for n in vs:
                collect(n, lookup, seeds, out)
            return
        case ast.UnaryOp(op=ast.Not(), operand=a):
            collect(a, lookup, seeds, out)
            return
        case ast.Compare(left=left, ops=ops, comparators=cs):
            a = left
            for op, b in zip(ops, cs):
                out.append(compare(a, op, b, lookup, seeds))
                a = b
            return
    out.append(Comparison(ast.unparse(node), bool(evaluate(ast.unparse(node), lookup)), method=EXACT))


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


def compare(a, op, b, lookup, seeds) -> Comparison:
    """One pair `a op b`: whether it holds on the means, and where it can, the interval of its margin."""
    text = f"{ast.unparse(a)} {SYMBOLS[type(op)]} {ast.unparse(b)}"
    holds = bool(evaluate(text, lookup))
    ta, tb = terms(a), terms(b)
    per = {t: seeds(*t) for t in dict.fromkeys(ta + tb)} if seeds is not None else {}
    have_seeds = bool(per) and all(per.values())
    by_variant = {}
    for (variant, _, _), p in (per.items() if have_seeds else ()):
        by_variant[variant] = by_variant.get(variant, set(p)) & set(p)
    if type(op) not in ORDERS:  # == and != (a count, a tag): exact, on each seed where there are seeds
        c = Comparison(text, holds, method=EXACT, label=text)
        if have_seeds and (common := set.intersection(*by_variant.values())):
            c.held = [bool(evaluate(text, _at(per, s))) for s in sorted(common)]
            c.seeds, c.method = {variant: len(common) for variant in by_variant}, PER_SEED
        return c
    flip, strict = ORDERS[type(op)]
    if not tb:  # against a constant: "≥ 0.9"
        label = f"{SHORT[type(op)]} {ast.unparse(b)}"
    elif not ta:
        label = f"{SHORT[MIRROR[type(op)]]} {ast.unparse(a)}"
    else:
        label = text
    c = Comparison(text, holds, strict=strict, label=label, flip=flip, sides=(ast.unparse(a), ast.unparse(b)))
    if not have_seeds or any(isinstance(x, str) for p in per.values() for x in p.values()):  # a tag: the means
        return c
    c.seeds = {variant: len(s) for variant, s in by_variant.items()}
    margin = ast.BinOp(b, ast.Sub(), a) if flip else ast.BinOp(a, ast.Sub(), b)
    common = set.intersection(*by_variant.values())
    one_exercise = len({v.split(":")[0] if ":" in v else "" for v in by_variant}) == 1
    if one_exercise and all(s == common for s in by_variant.values()) and common:
        values = [float(evaluate(ast.unparse(margin), _at(per, seed))) for seed in sorted(common)]
        c.difference = stats.one_sample(values, 0.0, method=stats.PAIRED if len(by_variant) > 1 else stats.ONE_SAMPLE)
    else:
        va, vb = {t[0] for t in ta}, {t[0] for t in tb}
        sa = set.intersection(*(by_variant[x] for x in va)) if va else set()
        sb = set.intersection(*(by_variant[x] for x in vb)) if vb else set()
        if not (va and vb and sa and sb) or va & vb:  # no two separate samples to set side by side
            return c
        xa = [float(evaluate(ast.unparse(a), _at(per, s))) for s in sorted(sa)]
        xb = [float(evaluate(ast.unparse(b), _at(per, s))) for s in sorted(sb)]
        c.difference = stats.welch(xb, xa) if flip else stats.welch(xa, xb)
    c.method = c.difference.method if c.difference.low is not None else ONE_SEED
    windows = _windows(ta + tb, by_variant, seeds)
    if windows:
        c.difference = stats.with_windows(c.difference, windows)
    return c


def _windows(named, by_variant: dict, seeds) -> float | None:
    """The validation windows' standard error of a margin: each windowed term's, averaged over its seeds (they
    share the windows, so it does not shrink with them), summed in squares over the terms (taken as independent:
    the safe side, two models' errors on the same windows correlate positively). None when no term is windowed or
    a run did not log its error (runs from before it was logged)."""
    squares, windowed = 0.0, False
    for variant, key, step in dict.fromkeys(named):
        if key not in WINDOWED:
            continue
        windowed = True
        per = seeds(variant, WINDOWED[key], step) or {}
        got = [per[s] for s in by_variant[variant] if s in per]
        if not got:
            return None
        squares += (sum(got) / len(got)) ** 2
    return squares ** 0.5 if windowed else None


def _at(per: dict, seed: int):
    return lambda variant, key, step: per[variant, key, step][seed]


def _describe(v: Verdict, check: str) -> None:
    """The verdict's interval, method, seed counts and note, from its comparisons."""
    cs = v.comparisons
    with_interval = [c for c in cs if c.interval]
    if len(with_interval) == 1:
        v.interval = with_interval[0].interval
    else:
        v.interval = "; ".join(f"{c.label}: {c.interval}" for c in with_interval)
    v.method = ", ".join(dict.fromkeys(c.method for c in cs))
    counts = {}
    for c in cs:
        counts.update(c.seeds)
    if len(set(counts.values())) == 1:
        v.seeds = str(next(iter(counts.values())))
    elif counts:
        v.seeds = ", ".join(f"{k} {n}" for k, n in counts.items())
    notes = []
    if len(set(counts.values())) > 1:
        notes.append(f"the variants compared have different numbers of seeds ({v.seeds})")
    for c in cs if not v.finding else ():
        notes += _comparison_note(c)
    if v.looked and not v.finding:
        notes += _look_note(*v.looked)
    if any(c.method == ONE_SEED for c in cs):
        notes.append("one seed: no interval")
    if v.finding:
        notes.append("a finding, not a verdict: " + (v.wording or "no interval") + " (95% interval, outside the "
                     "table's multiplicity family)")
    if v.verdict == NOT_REPRODUCED and not notes:
        notes.append(f"check: {check}")
    v.note = "; ".join(notes)


def _look_note(last: int, most: int) -> list[str]:
    """What the table says of a claim judged after seeds were added, or on fewer seeds than its runs have."""
    notes = []
    if most > last:
        notes.append(f"judged on the first {last} seeds of each variant: the looks are at "
                     f"{', '.join(map(str, decision.LOOKS))} seeds, fixed in advance so that adding seeds keeps the "
                     f"table's error rate (analysis/verdicts/decision.py)")
    if last > decision.LOOKS[0]:
        notes.append(f"look {decision.LOOKS.index(last) + 1} of {len(decision.LOOKS)}, {last} seeds: seeds added after "
                     f"the first look (make decide); its p is sequential, the level spent over the looks")
    return notes


def _comparison_note(c: Comparison) -> list[str]:
    """What one comparison's verdict needs said beside it."""
    verdict, d = c.verdict, c.difference
    if verdict == INDICATIVE:
        return [f"{c.text}: {decision.indicative(c.n or 1)}, fewer than the {decision.MIN_SEEDS} a verdict needs; the "
                f"means {'hold' if c.holds else 'fail'}"]
    if c.held is not None:
        return [f"{c.text}: holds on {sum(c.held)} of {len(c.held)} seeds"] if verdict == WITHIN_NOISE else []
    if isinstance(c, Prediction):
        return [f"{c.label}: outside our prediction interval, widened by {decision.TOLERANCE:.0%}"] \
            if verdict == NOT_REPRODUCED else []
    if verdict == WITHIN_NOISE:
        if d.p is not None and d.p < decision.ALPHA:
            q = c.p if c.p_adjusted is None else c.p_adjusted
            return [f"{c.text}: the 95% interval excludes zero (p {d.p:.2g}), but not at the share of the level its "
                    f"look spends, after {decision.METHOD.title()}'s correction over the table (p for the verdict "
                    f"{q:.2g})"]
        side = "the means hold, but" if c.holds else "the means fail, but"
        if stats.windows_hold_zero(d):
            return [f"{c.text}: {side} the validation windows' own error (se {d.se_windows:.3f}) holds zero: more "
                    f"seeds cannot resolve it, more validation windows could"]
        need = stats.seeds_needed(d)
        more = (f"about {need} seeds per variant would give {decision.POWER:.0%} power against a true difference of "
                f"this size at this spread; `make decide` adds them in rounds whose error the table holds") \
            if need else "more than 100 seeds would be needed to resolve a difference this small at this spread"
        return [f"{c.text}: {side} the 95% interval holds zero over {d.n_a} seeds; {more}"]
    if verdict == NOT_REPRODUCED and d is not None and d.low is not None:
        return [f"{c.text}: the 95% interval lies on the wrong side of zero"]
    if c.holds != (verdict == REPRODUCED):
        return [f"{c.text}: the means {'hold' if c.holds else 'fail'}, the seeds' interval says otherwise"]
    return []
