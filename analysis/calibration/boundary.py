"""Each claim of the exercise files set on its boundary: how every number it reads is drawn, so that the claim is
neither true nor false and any firm verdict on it is a false one.

Each claim gets its own copy of the variants it reads (its numbers are drawn for it alone, whatever other claims read
of the same variant), the claim renamed to read them, so that every claim's truth can be set where its own test is
hardest: the expected margin of each comparison zero (a t-test's boundary), a count or a tag holding on each seed
with probability one half (the sign test's), a lesson's single number delta from our setup's mean (the equivalence's
boundary, where "reproduced" is false; "not reproduced" is true there, and false at the lesson's value, which a run
of its own draws: at_value). A comparison is set by solving for the centre of one number it reads that no earlier comparison has set (the one fewest later
comparisons read), or failing that of all of them shifted together; the margin is the check's own expression,
evaluated on many draws of the numbers as the spreads (spreads.py) say they vary. A comparison whose numbers were all
set by earlier ones must then lie on the side its claim needs (the true side within an `and` or a chain, the false
side within an `or`); where it does not, or where nothing can be solved for, the claim cannot be set on its boundary
and `Unplaceable` names it and why.

At a true effect (`effect` > 0) each comparison is set that many of its margin's standard deviations on its true
side, a count or tag holds with probability Φ(effect), and a lesson's single number is our setup's mean: the power.
"""
import ast
import copy
import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from scipy import optimize
from scipy import stats as scipy_stats

from analysis.calibration import spreads
from analysis.calibration.spreads import Spread, SpreadKind
from analysis.verdicts import bounds, claim_kinds, claims
from analysis.verdicts.claim_kinds import Placement
from lm.settings.claims import Claim, ClaimKind
from lm.settings.exercises import Exercise, evaluate, term, terms, tree

DRAWS = 4000   # draws of each number to set a comparison's expected margin: its error ~1.5% of the margin's sd


class Unplaceable(ValueError):
    """A claim whose truth cannot be set on its boundary from its form: the message names it and says why."""


@dataclass
class Number:
    """One number a claim reads, in the claim's own copy of its variants, and how it is drawn."""
    exercise: str           # the exercise whose results hold it
    variant: str            # the claim's own copy of the variant
    key: str
    step: int | None
    spread: Spread
    center: float | str     # a tag's value when it holds (`values`)
    values: tuple = ()      # a tag or a count set for the sign test: (the value that holds, the one that does not)
    p_hold: float = 1.0     # with `values`: how often the first is drawn
    set: bool = False       # its centre was set by a comparison (or fixed as a constant)

    @property
    def window_scored(self) -> bool:
        return claims.window_scored(self.key) and self.spread.window_sd > 0

    def draw(self, z: np.ndarray, center=None, scale: float = 1.0) -> np.ndarray:
        """Values from standard draws z (their shape), the centre given or its own, the spread times `scale`: as its
        kind varies."""
        c = self.center if center is None else center
        if self.values:
            first, other = self.values
            return np.where(scipy_stats.norm.cdf(z) < self.p_hold, first, other)
        kind = self.spread.kind
        if kind == SpreadKind.TAG:   # shown, not compared: its value on every seed
            return np.full(z.shape, c, dtype=object)
        if kind == SpreadKind.CONSTANT:
            return np.full(z.shape, float(c))
        x = float(c) + scale * self.spread.sd * z
        if kind == SpreadKind.SHARE:
            return np.clip(x, 0.0, 1.0)
        if kind == SpreadKind.INTEGER:
            return np.maximum(0.0, np.round(x))
        return x


@dataclass
class World:
    """One claim in its own copy of its variants: the claim as the table judges it, the numbers it reads, each
    variant's seeds, and for a lesson's single number how far our setup's mean lies from it and how its own draw
    varies."""
    exercise: str
    index: int
    original: Claim
    claim: Claim
    numbers: dict[tuple[str, str, str, int | None], Number]     # (exercise, variant, key, step)
    seeds: dict[tuple[str, str], list[int]]                      # (exercise, variant): its seeds
    offset: float = 0.0     # a value claim: our mean = the lesson's number - offset · side - its own draw
    lesson_sd: float = 0.0  # a value claim: the lesson's number's spread about its setup's mean
    bias_sd: float = 0.0    # a value claim: our own fixed windows' error, common to our seeds, where not logged
    counted: bool = True    # a member of the table's family: a firm verdict on it counts
    control: bool = False
    note: str = ""          # how it was set, where that needs saying
    problem: str = ""       # why it could not be set on its boundary (Unplaceable): its numbers at their centres

    @property
    def kind(self) -> ClaimKind:
        return self.original.kind

    @property
    def single(self) -> bool:
        """A lesson's single number, judged both ways."""
        return claim_kinds.of(self.original).placement == Placement.SINGLE_NUMBER


def private(variant: str, exercise: str, index: int) -> str:
    """A claim's own copy of a variant: `base` of claim 3 of baseline is `base__baseline3`."""
    return f"{variant}__{exercise}{index}"


class _Rename(ast.NodeTransformer):
    """Every variant an expression names, renamed to the claim's own copy; another exercise's stays qualified."""

    def __init__(self, exercise: str, index: int):
        self.exercise, self.index = exercise, index

    def visit_Attribute(self, node: ast.Attribute):
        t = term(node)
        if t is None:
            return self.generic_visit(node)
        if isinstance(node.value, ast.Attribute):   # exercise.variant.key
            node.value.attr = private(node.value.attr, self.exercise, self.index)
        else:
            node.value.id = private(node.value.id, self.exercise, self.index)
        return node


def renamed(expr: str | None, exercise: str, index: int) -> str | None:
    if not expr:
        return expr
    return ast.unparse(_Rename(exercise, index).visit(copy.deepcopy(tree(expr))))


def worlds(exercises: dict[str, Exercise], effect: float = 0.0, at_value: bool = False) \
        -> tuple[list[World], list[str]]:
    """Every claim of the exercises set on its boundary (or `effect` standard deviations on its true side; with
    `at_value`, a lesson's single number at our setup's mean, the checks on their boundary), and the claims that
    cannot be, by name and why."""
    seeds = {(name, v): [r.seed for r in ex.runs(12) if r.variant == v] for name, ex in exercises.items()
             for v in ex.variants}
    found = [world(name, i, c, seeds, effect, at_value) for name, ex in exercises.items()
             for i, c in enumerate(ex.claims, 1)]
    return found, [f"{w.exercise} claim {w.index} ({w.original.text[:60]!r}): {w.problem}" for w in found if w.problem]


def world(exercise: str, index: int, claim: Claim, seeds: dict, effect: float = 0.0, at_value: bool = False) \
        -> World:
    """One claim's world (the module's note), set where its kind's placement says (PLACE)."""
    kind = claim_kinds.of(claim)
    new = dataclasses.replace(claim, check=renamed(claim.check, exercise, index),
                              ours=renamed(claim.ours, exercise, index))
    w = World(exercise, index, claim, new, {}, {}, counted=kind.family == claim_kinds.TABLE,
              control=kind.placement == Placement.CONTROL)
    for expr in filter(None, (claim.check, claim.ours)):
        for t in terms(tree(expr).body):
            _number(w, t, seeds)
    if claim.answer:
        for v in [v for (e, v) in seeds if e == exercise]:
            _number(w, (v, claim.answer, None), seeds)
    try:
        PLACE[kind.placement](w, claim, effect, at_value)
    except Unplaceable as e:
        if kind.finding:   # no verdict to be wrong: its numbers where the spreads centre them
            w.note = f"a finding, not set on its boundary ({e})"
        else:
            w.problem, w.counted = str(e), False
    return w


def _constants(w: World, claim: Claim, effect: float, at_value: bool) -> None:
    """A deterministic check: every number it reads must be a constant; nothing to set."""
    w.counted = False
    moving = [f"{n.variant.split('__')[0]}.{n.key} ({n.spread.kind}, {n.spread.source})"
              for n in w.numbers.values() if n.spread.kind != SpreadKind.CONSTANT]
    if moving:
        raise Unplaceable(f"declared deterministic, but it reads numbers that vary over seeds: {', '.join(moving)}")


def _control(w: World, claim: Claim, effect: float, at_value: bool) -> None:
    """The A/A control: its two numbers alike."""
    a, b = list(w.numbers.values())
    b.center = a.center = a.spread.center
    b.spread = a.spread


def _comparisons(w: World, claim: Claim, effect: float, at_value: bool) -> None:
    _place(w, claims.shape(w.claim.check).body, True, effect)


def _number(w: World, t: tuple[str, str, int | None], seeds: dict) -> None:
    variant, key, step = t
    exercise, own = variant.split(":", 1) if ":" in variant else (w.exercise, variant)
    copy_ = private(own, w.exercise, w.index)
    k = (exercise, copy_, key, step)
    if k in w.numbers:
        return
    s = spreads.find(exercise, own, key, step)
    w.numbers[k] = Number(exercise, copy_, key, step, s, s.center, set=s.kind == SpreadKind.CONSTANT)
    w.seeds[exercise, copy_] = seeds[exercise, own]


def _single(w: World, claim: Claim, effect: float, at_value: bool) -> None:
    """A lesson's single number: delta from our setup's mean, or at a true effect or `at_value` at it."""
    _value(w, claim, at_value or effect > 0)


def _value(w: World, claim: Claim, at_value: bool) -> None:
    """A lesson's single number: our setup's mean is the lesson's number less the claim's delta (on either side where
    the number's range allows, drawn each table) and less the lesson's own draw about its setup's mean: the seeds'
    spread, and over the windows the lesson averaged, the per-window spread; at_value: the lesson's setup's mean is
    ours."""
    (n,) = w.numbers.values()
    s = n.spread
    if s.kind in (SpreadKind.CONSTANT, SpreadKind.TAG, SpreadKind.INTEGER):
        raise Unplaceable(f"a lesson's single number read from a {s.kind} ({n.key})")
    w.offset = 0.0 if at_value else float(claim.delta)
    evaluation = s.window_sd ** 2 / claim.windows if claim.windows and n.window_scored else 0.0
    w.lesson_sd = math.sqrt(s.sd ** 2 + evaluation)
    if n.window_scored and not s.per_window and s.windows:
        w.bias_sd = s.window_sd / math.sqrt(s.windows)
    n.center = float(claim.value)
    n.set = True


# --- setting comparisons on their boundary -----------------------------------------------------------------
def _pairs(node, want: bool) -> Iterator[tuple[ast.AST, ast.cmpop, ast.AST, bool]]:
    """Each comparison of a check's shape in collect's order, with the side its claim needs it on when it is not on
    its boundary: True (holds) within an `and` or a chain, False within an `or`, swapped under `not`."""
    match node:
        case ast.BoolOp(op=ast.And(), values=vs):
            for n in vs:
                yield from _pairs(n, want)
        case ast.BoolOp(op=ast.Or(), values=vs):
            for n in vs:
                yield from _pairs(n, not want)
        case ast.UnaryOp(op=ast.Not(), operand=a):
            yield from _pairs(a, not want)
        case ast.Compare(left=left, ops=ops, comparators=cs):
            a = left
            for op, b in zip(ops, cs):
                yield a, op, b, want
                a = b
        case _:
            raise Unplaceable(f"{ast.unparse(node)!r} is no comparison: there is no boundary to set it on")


def _key(w: World, t: tuple[str, str, int | None]) -> tuple[str, str, str, int | None]:
    variant, key, step = t
    exercise, own = variant.split(":", 1) if ":" in variant else (w.exercise, variant)
    return exercise, own, key, step


def _place(w: World, node, want: bool, effect: float) -> None:
    pairs = list(_pairs(node, want))
    placed = False
    rng = np.random.default_rng(0)
    z = {k: rng.standard_normal(DRAWS) for k in w.numbers}
    for i, (a, op, b, side) in enumerate(pairs):
        text = f"{ast.unparse(a)} {claims.SYMBOLS[type(op)]} {ast.unparse(b)}"
        named = [_key(w, t) for t in dict.fromkeys(terms(a) + terms(b))]
        later = [_key(w, t) for (x, _, y, _) in pairs[i + 1:] for t in terms(x) + terms(y)]
        free = sorted((k for k in named if not w.numbers[k].set), key=lambda k: later.count(k))
        if type(op) not in claims.ORDERS:
            _place_sign(w, text, a, op, b, free, effect)
            placed = True
            continue
        flip, strict = claims.ORDERS[type(op)]
        left, right = ast.unparse(a), ast.unparse(b)

        def margin(centers: dict) -> np.ndarray:
            def look(variant, key, step):
                k = _key(w, (variant, key, step))
                return w.numbers[k].draw(z[k], centers.get(k))
            xa, xb = evaluate(left, look, claims.ELEMENTWISE), evaluate(right, look, claims.ELEMENTWISE)
            return np.asarray(xb - xa if flip else xa - xb, float) * np.ones(DRAWS)

        if not free:
            m = float(np.mean(margin({})))
            if (m > 0 or (not strict and m >= 0)) != side and abs(m) > 1e-12:
                raise Unplaceable(f"{text}: every number it reads is set by an earlier comparison (or is a constant), "
                                  f"and it lies on the {'false' if side else 'true'} side there (margin {m:.3g})")
            continue
        spread = float(np.std(margin({})))
        target = effect * spread if effect else 0.0
        for move in [[k] for k in free] + ([free] if len(free) > 1 else []):
            solved = _solve(w, move, lambda c, move=move: float(np.mean(margin({k: w.numbers[k].center + c
                                                                                  for k in move}))) - target)
            if solved is not None:
                for k in move:
                    w.numbers[k].center = float(w.numbers[k].center) + solved
                break
        else:
            raise Unplaceable(f"{text}: no centre of {', '.join(k[2] for k in free)} puts its expected margin at "
                              f"{target:.3g}")
        placed = True
        for k in named:
            w.numbers[k].set = True
    if not placed:
        raise Unplaceable("every number it reads is a constant: no comparison of it can be set on its boundary "
                          "(declare it deterministic)")


def _solve(w: World, move: list, g) -> float | None:
    """The shift of the moved numbers' centres at which g is zero, bracketed outward from no shift; None if none."""
    scale = max([w.numbers[k].spread.sd for k in move] + [abs(float(w.numbers[k].center)) * 0.05 for k in move]
                + [1e-3])
    at0 = g(0.0)
    if at0 == 0:
        return 0.0
    for i in range(60):
        step = scale * 2 ** (i / 2)
        for x in (-step, step):
            if np.sign(g(x)) != np.sign(at0):
                lo, hi = sorted((0.0, x))
                return optimize.brentq(g, lo, hi, xtol=1e-12 * max(1.0, scale), rtol=1e-10)
    return None


def _place_sign(w: World, text: str, a, op, b, free: list, effect: float) -> None:
    """`==` or `!=` against a constant: the number is the constant on a share of the seeds (the comparison holds
    with probability one half, Φ(effect) at an effect), another value on the rest."""
    ta, tb = terms(a), terms(b)
    if not free or len(ta) + len(tb) != 1 or len(free) != 1:
        raise Unplaceable(f"{text}: an exact comparison is set on its boundary only between one number and a constant")
    constant = evaluate(ast.unparse(b if ta else a), lambda *_: None)
    n = w.numbers[free[0]]
    other = "another" if isinstance(constant, str) else float(constant) + 1
    p = scipy_stats.norm.cdf(effect) if effect else 0.5
    n.values = (constant, other)
    n.p_hold = p if isinstance(op, ast.Eq) else 1 - p
    n.set = True


# Each kind's placement (claim_kinds.Placement), its setter.
PLACE = {Placement.COMPARISONS: _comparisons, Placement.SINGLE_NUMBER: _single, Placement.CONSTANTS: _constants,
         Placement.CONTROL: _control, Placement.NONE: lambda w, claim, effect, at_value: None}


@dataclass
class Draw:
    """One simulated store's numbers for one claim: per number, each seed's value (up to the last look's seeds),
    and where the store logs them, each seed's values on the windows."""
    final: dict = field(default_factory=dict)       # (exercise, variant, key, step) -> {seed: value}
    windows: dict = field(default_factory=dict)     # (exercise, variant, key, step) -> {seed: array}


WINDOWS = 64   # windows drawn for a number the store logs per window: their spread scaled to stand for the real count


class Stress(StrEnum):
    """How the simulated seeds depart from the engine's assumptions: not at all, each number's seed spread
    differing from its metric's by a random factor (variances more unequal than the pooled prior allows: a log-sd of
    ln 2, so a spread half or twice its row's one time in three), or heavy tails (Student's t with 3 degrees of
    freedom, scaled to the row's spread)."""
    NONE = "none"
    UNEQUAL = "unequal variances"
    HEAVY = "heavy tails"


UNEQUAL_LOG_SD = math.log(2)
HEAVY_DF = 3


def standard(rng: np.random.Generator, n: int, stress: "Stress") -> np.ndarray:
    """n draws of unit spread: normal, or under heavy tails Student's t scaled to unit variance."""
    if stress == Stress.HEAVY:
        return rng.standard_t(HEAVY_DF, n) / math.sqrt(HEAVY_DF / (HEAVY_DF - 2))
    return rng.standard_normal(n)


def draw(w: World, rng: np.random.Generator, stress: "Stress" = None) -> Draw:
    """Up to the last look's seeds of every number of the world, as a store would hold them."""
    stress = stress or Stress.NONE
    out = Draw()
    side = rng.choice((-1.0, 1.0))
    if w.single and w.offset:   # our mean delta from the lesson's number, where it can lie
        (n,) = w.numbers.values()
        low, high = bounds.of(n.key)
        if not low <= float(n.center) - side * w.offset <= high:
            side = -side
    shift = -side * w.offset - rng.normal(0.0, w.lesson_sd) if w.single else 0.0
    shared = {}    # each window's difficulty, common to every run scored on the same windows
    for k, n in w.numbers.items():
        seeds = w.seeds[n.exercise, n.variant]
        z = standard(rng, len(seeds), stress)
        scale = math.exp(rng.normal(0.0, UNEQUAL_LOG_SD)) if stress == Stress.UNEQUAL else 1.0
        center = n.center if isinstance(n.center, str) or n.values else float(n.center) + shift
        if w.single and w.bias_sd:
            center = center + rng.normal(0.0, w.bias_sd)
        values = n.draw(z, center, scale)
        if n.window_scored and n.spread.per_window:
            group = n.spread.windows
            if group not in shared:
                shared[group] = rng.standard_normal(WINDOWS)
            sd = n.spread.window_sd * math.sqrt(WINDOWS / n.spread.windows)
            rho = spreads.WINDOW_CORRELATION
            per = {s: values[i] + sd * (math.sqrt(rho) * shared[group] + math.sqrt(1 - rho) *
                                        rng.standard_normal(WINDOWS)) for i, s in enumerate(seeds)}
            out.windows[k] = per
            out.final[k] = {s: float(x.mean()) for s, x in per.items()}
        else:   # a number on fixed windows the store does not log per window: the windows are the estimand
            out.final[k] = {s: (values[i] if isinstance(values[i], str) else float(values[i]))
                            for i, s in enumerate(seeds)}
    return out
