"""The lessons' claims against our numbers: each claim's check evaluated on a lookup, and a verdict with its interval.

A lookup is `lookup(variant, key, step)`: the mean over seeds of a metric's final value (step None), of the
value logged at `step`, or a tag's most common value; it raises lm.spec.exercises.NotRun for what was not run. Given
also `seeds(variant, key, step)`, the same number per seed ({seed: value}, or None where there is no per-seed
form: a tag, the time budget), every comparison in a check (`a < b`, `a < b - 0.5`, `x >= 0.9`, `a[63] < b[15]`,
each pair of a chain `a > b > c`) gets the 95% interval of its margin, the amount by which it holds:
- paired t over the per-seed margins where every variant it reads has the same seeds (the same seed sees the same
  batches in the same order), one-sample t where it reads one variant against a constant;
- Welch's t where one side's variants and the other's were run with different seeds.
A comparison is reproduced when its interval lies above zero, not reproduced when it lies below, and within seed
noise when it holds zero, whichever way the means fell. `and` needs every part, `or` one; a chain is `and`.
"""
import ast
from dataclasses import dataclass, field

from analysis import stats
from lm.spec import heads
from lm.spec.exercises import Claim, NotApplicable, NotMeasured, NotRun, evaluate

REPRODUCED, NOT_REPRODUCED, NOT_RUN, ANSWERED = "reproduced", "not reproduced", "not run", "answered"
WITHIN_NOISE = "within seed noise"
NOT_APPLICABLE = "not applicable"   # to the corpus the runs read; the note says why
NOT_MEASURED = "not measured"       # the runs were made with the measurement switched off; the note names it
VERDICTS = (REPRODUCED, WITHIN_NOISE, NOT_REPRODUCED, NOT_RUN, ANSWERED, NOT_APPLICABLE, NOT_MEASURED)
EXACT, MEANS, ONE_SEED = "exact", "means only", "one seed"
# Shares of 1, shown as percentages like the lessons give them: the head statistics' from their table.
PERCENT = {"probe_top1_p", "word_validity", "word_validity_stripped", "real_word_share", "speaker_line_share",
           "speaker_line_share_train", *heads.percent_metrics()}
ORDERS = {ast.Gt: (False, True), ast.GtE: (False, False), ast.Lt: (True, True), ast.LtE: (True, False)}
# (whether the margin is right − left, whether the comparison is strict)
SYMBOLS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}
SHORT = {ast.Gt: ">", ast.GtE: "≥", ast.Lt: "<", ast.LtE: "≤"}
MIRROR = {ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.LtE: ast.GtE}


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

    @property
    def verdict(self) -> str:
        d = self.difference
        if d is None or d.low is None:
            return REPRODUCED if self.holds else NOT_REPRODUCED
        if d.low > 0 or (not self.strict and d.low >= 0):
            return REPRODUCED
        if d.high < 0 or (self.strict and d.high <= 0 and d.low == d.high):
            return NOT_REPRODUCED
        return WITHIN_NOISE

    @property
    def interval(self) -> str:
        return stats.interval(self.difference) if self.difference is not None else ""


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


def judge(claim: Claim, lookup, variants=(), seeds=None, exercise: str = "") -> Verdict:
    """The verdict on one claim; `variants` are the exercise's, for a question's answer; `seeds` the per-seed
    lookup (without it every comparison is read on the means alone); `exercise` names the command that adds seeds."""
    ours = show(claim.ours, lookup) if claim.ours else ""
    v = Verdict(claim.text, claim.lesson or "", ours, NOT_RUN)
    if claim.answer:
        return answer(claim, lookup, variants, v)
    if not claim.check:
        v.verdict = ""
        v.note = "a prediction, worked out before running: no verdict" if claim.prediction else "no check"
        return v
    try:
        evaluate(claim.check, lookup)
        v.comparisons = []
        v.verdict = _judge(ast.parse(claim.check, mode="eval").body, lookup, seeds, v.comparisons)
    except NotApplicable as e:
        v.verdict, v.note = NOT_APPLICABLE, str(e)
        return v
    except NotMeasured as e:
        v.verdict, v.note = NOT_MEASURED, str(e)
        return v
    except NotRun as e:
        v.verdict, v.note = NOT_RUN, str(e)
        return v
    except (TypeError, ValueError, ZeroDivisionError) as e:
        v.verdict, v.note = NOT_RUN, f"the check could not be evaluated: {e}"
        return v
    _describe(v, claim.check, exercise)
    return v


def _judge(node, lookup, seeds, out: list) -> str:
    """Three-valued: REPRODUCED, NOT_REPRODUCED or WITHIN_NOISE, for a node of a check's syntax tree."""
    match node:
        case ast.BoolOp(op=ast.And(), values=vs):
            return _all([_judge(n, lookup, seeds, out) for n in vs])
        case ast.BoolOp(op=ast.Or(), values=vs):
            parts = [_judge(n, lookup, seeds, out) for n in vs]
            return REPRODUCED if REPRODUCED in parts else NOT_REPRODUCED if set(parts) == {NOT_REPRODUCED} \
                else WITHIN_NOISE
        case ast.UnaryOp(op=ast.Not(), operand=a):
            flip = {REPRODUCED: NOT_REPRODUCED, NOT_REPRODUCED: REPRODUCED}
            r = _judge(a, lookup, seeds, out)
            return flip.get(r, r)
        case ast.Compare(left=left, ops=ops, comparators=cs):
            parts, a = [], left
            for op, b in zip(ops, cs):
                c = compare(a, op, b, lookup, seeds)
                out.append(c)
                parts.append(c.verdict)
                a = b
            return _all(parts)
    holds = bool(evaluate(ast.unparse(node), lookup))
    out.append(Comparison(ast.unparse(node), holds, method=EXACT))
    return REPRODUCED if holds else NOT_REPRODUCED


def _all(parts: list[str]) -> str:
    """A chain or an `and`: reproduced if every part is, not reproduced if any is, within seed noise otherwise."""
    if NOT_REPRODUCED in parts:
        return NOT_REPRODUCED
    return REPRODUCED if all(p == REPRODUCED for p in parts) else WITHIN_NOISE


def terms(node) -> list[tuple[str, str, int | None]]:
    """The (variant, key, step) numbers an expression reads, in the order it names them."""
    found = {}
    for n in ast.walk(node):
        match n:
            case ast.Subscript(value=ast.Attribute(value=ast.Name(id=variant), attr=key), slice=ast.Constant(value=s)):
                found[variant, key, int(s)] = None
            case ast.Attribute(value=ast.Name(id=variant), attr=key):
                found[variant, key, None] = None
    # an Attribute inside a Subscript is also walked: drop it when the subscripted form is there
    return [t for t in found if t[2] is not None or not any(u[:2] == t[:2] and u[2] is not None for u in found)]


def compare(a, op, b, lookup, seeds) -> Comparison:
    """One pair `a op b`: whether it holds on the means, and where it can, the interval of its margin."""
    text = f"{ast.unparse(a)} {SYMBOLS[type(op)]} {ast.unparse(b)}"
    holds = bool(evaluate(text, lookup))
    if type(op) not in ORDERS:  # == and != (a count, a tag): exact, on the means
        return Comparison(text, holds, method=EXACT, label=text)
    flip, strict = ORDERS[type(op)]
    ta, tb = terms(a), terms(b)
    if not tb:  # against a constant: "≥ 0.9"
        label = f"{SHORT[type(op)]} {ast.unparse(b)}"
    elif not ta:
        label = f"{SHORT[MIRROR[type(op)]]} {ast.unparse(a)}"
    else:
        label = text
    c = Comparison(text, holds, strict=strict, label=label)
    if seeds is None:
        return c
    per = {t: seeds(*t) for t in dict.fromkeys(ta + tb)}
    if not per or any(not p for p in per.values()):  # a tag or the budget: no per-seed form
        return c
    by_variant = {}
    for (variant, _, _), p in per.items():
        by_variant[variant] = by_variant.get(variant, set(p)) & set(p)
    c.seeds = {variant: len(s) for variant, s in by_variant.items()}
    margin = ast.BinOp(b, ast.Sub(), a) if flip else ast.BinOp(a, ast.Sub(), b)
    common = set.intersection(*by_variant.values())
    if all(s == common for s in by_variant.values()) and common:
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
    return c


def _at(per: dict, seed: int):
    return lambda variant, key, step: per[variant, key, step][seed]


def _describe(v: Verdict, check: str, exercise: str) -> None:
    """The verdict's interval, method, seed counts and note, from its comparisons."""
    cs = v.comparisons
    with_interval = [c for c in cs if c.difference is not None]
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
    for c in cs:
        if c.verdict == WITHIN_NOISE:
            d = c.difference
            side = "the means hold, but" if c.holds else "the means fail, but"
            need = stats.seeds_needed(d)
            more = (f"about {need} seeds per variant would resolve a difference of this size at this spread: "
                    f"make ablations ABLATIONS={exercise or '<exercise>'} SEEDS={need}") if need else \
                "more than 100 seeds would be needed to resolve a difference this small at this spread"
            notes.append(f"{c.text}: {side} the 95% interval holds zero over {d.n_a} seeds; {more}")
        elif c.verdict == NOT_REPRODUCED and c.difference is not None and c.difference.low is not None:
            notes.append(f"{c.text}: the 95% interval lies on the wrong side of zero")
        elif c.holds != (c.verdict == REPRODUCED):
            notes.append(f"{c.text}: the means {'hold' if c.holds else 'fail'}, the seeds' interval says otherwise")
    if any(c.method == ONE_SEED for c in cs):
        notes.append("one seed: no interval")
    if v.verdict == NOT_REPRODUCED and not notes:
        notes.append(f"check: {check}")
    v.note = "; ".join(notes)


def answer(claim: Claim, lookup, variants, v: Verdict) -> Verdict:
    """A question: the variant with the best value of the named metric among those that were run."""
    values, missing = {}, []
    for variant in variants:
        try:
            values[variant] = float(lookup(variant, claim.answer, None))
        except NotRun:
            missing.append(variant)
    if not values:
        v.note = f"no variant has {claim.answer}"
        return v
    pick = min if claim.best == "min" else max
    best = pick(values, key=values.get)
    v.ours = f"{best} ({claim.answer} {fmt(values[best])})"
    v.verdict = ANSWERED
    if missing:
        v.note = f"not run: {', '.join(missing)}"
    return v
