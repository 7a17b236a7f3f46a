"""What the claims say a figure's numbers should be, read from the exercise's claims, never typed again: a lesson's
single number (a `value:` claim) as a marked line, and a check of one number against constants (`x >= 0.1`,
`3.5 <= x < 4.5`, `abs(x - 4.174) < 0.0005`) as the band it asks for.

A mark is a plain dict, so that the painter's workers draw it: variant, key, step (None: the final value), low and
high (equal for a single number; None for an open side), text (its legend entry) and lesson (the lesson's own
number, not a band a check sets).
"""
import ast
import math

from analysis.verdicts import claim_kinds
from lm.settings.claims import Source
from lm.settings.exercises import Exercise, term, tree

FLIP = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


def of(ex: Exercise, keys=None, variants=None) -> list[dict]:
    """The exercise's marks, those on `keys` and `variants` when given; one per claim and number, in the claims'
    order."""
    out = []
    for claim in ex.claims:
        drawn = claim_kinds.of(claim).marks
        if drawn == claim_kinds.Marks.VALUE:
            found = _single(claim.ours)
            if found:
                out.append(_mark(found, claim.value, claim.value, f"the lesson: {claim.value:g}", True))
        elif drawn == claim_kinds.Marks.BANDS:   # a check of ours or the lesson's; a finding asks nothing
            whose = "the claim" if claim.source == Source.LESSON else "our claim"
            for found, (low, high) in _bands(tree(claim.check).body).items():
                out.append(_mark(found, low, high, f"{whose}: {_words(low, high)}", False))
    return [m for m in out if (keys is None or m["key"] in keys) and (variants is None or m["variant"] in variants)]


def _mark(found: tuple, low, high, text: str, lesson: bool) -> dict:
    variant, key, step = found
    return {"variant": variant, "key": key, "step": step, "low": low, "high": high, "text": text, "lesson": lesson}


def _single(expr: str | None):
    """(variant, key, step) when the expression names one number of the exercise's own variants, else None."""
    if not expr:
        return None
    found = term(tree(expr).body)
    return found if found and ":" not in found[0] else None


def _number(node) -> float | None:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _bands(node) -> dict[tuple, tuple]:
    """{(variant, key, step): (low, high)} for every number the check holds between constants."""
    bands: dict[tuple, list] = {}

    def bound(found, low=None, high=None):
        if found is None or ":" in found[0]:
            return
        band = bands.setdefault(found, [None, None])
        band[0] = low if low is not None else band[0]
        band[1] = high if high is not None else band[1]

    def visit(n):
        match n:
            case ast.BoolOp(op=ast.And(), values=vs):
                for v in vs:
                    visit(v)
            case ast.Compare(left=left, ops=ops, comparators=cs):
                a = left
                for op, b in zip(ops, cs):
                    pair(a, type(op), b)
                    a = b

    def pair(a, op, b):
        if op not in FLIP:
            return
        if _number(a) is not None and term(b) is not None:   # 0.5 <= x: x >= 0.5
            a, b, op = b, a, FLIP[op]
        c = _number(b)
        if c is None:
            return
        if term(a) is not None:
            bound(term(a), low=c) if op in (ast.Gt, ast.GtE) else bound(term(a), high=c)
            return
        # abs(x - c0) < d: the band c0 ± d
        match a:
            case ast.Call(func=ast.Name(id="abs"), args=[ast.BinOp(left=x, op=ast.Sub(), right=centre)]) \
                    if op in (ast.Lt, ast.LtE) and term(x) is not None and _number(centre) is not None:
                bound(term(x), _number(centre) - c, _number(centre) + c)

    visit(node)
    return {k: (low, high) for k, (low, high) in bands.items() if low is not None or high is not None}


def _words(low, high) -> str:
    if low is not None and high is not None:
        return f"{_g(low)} to {_g(high)}"
    return f"≥ {_g(low)}" if low is not None else f"≤ {_g(high)}"


def _g(x: float) -> str:
    return f"{x:g}" if math.isfinite(x) else str(x)
