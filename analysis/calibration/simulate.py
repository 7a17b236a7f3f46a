"""The claims table's error rate, measured through the table the report builds (analysis.verdicts.table).

A study is one simulated store: every claim of the exercise files in its own copy of its variants, its truth on its
boundary (boundary.py), every number it reads drawn per seed as the spreads say it varies, and each window's value
where the store logs them; the table judges it at the first look, then, as `make decide` would with no budget to
stop it, every claim the table leaves open and `make decide` would extend (planning.undecided: its plan reaches 80%
power by the last look) gets its next look's seeds, round after round, until none is left or the looks run out.
Every claim on its boundary is neither true nor false, so any firm verdict on a claim of the table's family is a
false one: the share of studies with one is the table's family-wise error rate, at the first look and after the
looks. The A/A control's own family is counted apart; deterministic checks have no error to control; findings and
questions no verdict. Numbers only: no store, no MLflow.
"""
import dataclasses
import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from analysis import planning
from analysis.calibration import boundary, census
from analysis.calibration.boundary import Stress, World
from analysis.verdicts import Numbers, claims, decision, table, variance
from lm.settings.exercises import Exercise

POOL = "_pool"   # the simulated store's other variants, which the seeds' variance is pooled over (census.py)

FIRM = decision.FIRM


@dataclass
class Tally:
    """What the studies gave: counts of studies, and of firm verdicts by claim and by test."""
    studies: int = 0
    any_first: int = 0                  # studies with a firm verdict on a claim of the family, at the first look
    any_looks: int = 0                  # ... after the looks
    control_first: int = 0              # studies with a firm A/A comparison, at the first look
    control_looks: int = 0
    claims_first: Counter = field(default_factory=Counter)   # (exercise, index) -> studies firm on it, first look
    claims_looks: Counter = field(default_factory=Counter)
    reproduced_first: Counter = field(default_factory=Counter)   # (exercise, index) -> studies reproduced on it
    reproduced_looks: Counter = field(default_factory=Counter)
    not_reproduced_first: Counter = field(default_factory=Counter)
    not_reproduced_looks: Counter = field(default_factory=Counter)
    paths_first: Counter = field(default_factory=Counter)    # test -> studies with a firm comparison by it
    paths_looks: Counter = field(default_factory=Counter)
    looks: Counter = field(default_factory=Counter)          # seeds at the last look -> claims judged there
    control_looked: int = 0             # summed over studies: the seeds of the A/A control's last look
    fdp_first: float = 0.0              # summed over studies: the false share of the firm verdicts, first look
    fdp_looks: float = 0.0

    def add(self, other: "Tally") -> "Tally":
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            setattr(self, f.name, a + b)
        return self


def exercises_of(ws: list[World], originals: dict[str, Exercise]) -> dict[str, Exercise]:
    """The simulated exercises: each the original with its claims renamed to their own variants, which it holds."""
    out = {}
    for name, ex in originals.items():
        own = sorted((w for w in ws if w.exercise == name), key=lambda w: w.index)
        variants = {v: [] for w in ws for (e, v) in w.seeds if e == name}
        out[name] = dataclasses.replace(ex, variants=variants, claims=[w.claim for w in own])
    return out


def bystanders(ws: list[World], rng: np.random.Generator, stress: Stress) -> Numbers:
    """The store's other variants of each metric the claims read (census.py): as many as the census counts less the
    claims' own copies, each with the first look's seeds, centred at 0 (a variance does not depend on it), its
    variance drawn from the census's prior."""
    copies: dict[tuple[str, str], set] = {}
    for w in ws:
        for (exercise, variant, key, step), n in w.numbers.items():
            copies.setdefault((key, variance.phase(key, step)), set()).add((exercise, variant))
    final, curves = {}, {}
    rows = census.table()
    seeds = range(1, decision.LOOKS[0] + 1)
    for pooled in copies:
        row = rows.get(pooled)
        if row is None:
            continue
        extra = max(0, row.groups - len(copies[pooled]))
        for i, var in enumerate(census.variances(row, extra, rng)):
            z = boundary.standard(rng, len(seeds), stress)
            per = {s: float(math.sqrt(var) * x) for s, x in zip(seeds, z)}
            name = f"by{i}"
            if pooled[1] == variance.Phase.END:
                final.setdefault(name, {})[pooled[0]] = per
            else:   # a step of the phase: 0 the untrained start, 1 any step of a curve
                step = int(pooled[1] == variance.Phase.CURVE)
                curves.setdefault(name, {}).setdefault(pooled[0], {})[step] = per
    pool = Exercise(name=POOL, title="the store's other variants", lesson="", measures="", variants={})
    return Numbers(pool, final, curves)


def results(ws: list[World], draws: list[boundary.Draw], seen: list[int], exercises: dict[str, Exercise],
            pool: Numbers | None = None) -> dict[str, Numbers]:
    """The studies' numbers as the table reads them, each world's variants cut to the seeds of its look, and the
    store's other variants (`pool`)."""
    final = {name: {} for name in exercises}
    curves = {name: {} for name in exercises}
    windows = {name: {} for name in exercises}
    for w, d, n in zip(ws, draws, seen):
        for (exercise, variant, key, step), per in d.final.items():
            cut = {s: per[s] for s in w.seeds[exercise, variant][:n]}
            if step is None:
                final[exercise].setdefault(variant, {})[key] = cut
            else:
                curves[exercise].setdefault(variant, {}).setdefault(key, {})[step] = cut
        for (exercise, variant, key, step), per in d.windows.items():
            cut = {s: per[s] for s in w.seeds[exercise, variant][:n]}
            windows[exercise].setdefault(variant, {}).setdefault(key, {})[step] = cut
    out = {name: Numbers(ex, final[name], curves[name], windows[name]) for name, ex in exercises.items()}
    return {**out, POOL: pool} if pool is not None else out


def extends(v: claims.Verdict) -> bool:
    """Whether `make decide`, with budget to spare, brings this claim to its next look."""
    if v.finding or v.control or v.deterministic or v.verdict not in (decision.Outcome.WITHIN_NOISE,
                                                                       decision.Outcome.INDICATIVE):
        return False
    if not v.looked or decision.next_look(v.looked[0]) is None:
        return False
    return not planning.undecided(v)[1]


def study(ws: list[World], exercises: dict[str, Exercise], rng: np.random.Generator, looks: bool = True,
          stress: Stress = Stress.NONE, truth: list[World] | None = None) -> Tally:
    """One simulated store through the table, at the first look and through `make decide`'s looks. `truth`: each
    claim's world where it differs from `ws` (a true effect), for a store of claims some true, some on their
    boundary."""
    truth = truth or ws
    draws = [boundary.draw(w, rng, stress) for w in truth]
    pool = bystanders(ws, rng, stress)
    seen = [decision.LOOKS[0]] * len(ws)
    t = table(results(ws, draws, seen, exercises, pool))
    out = Tally(studies=1)
    _count(out, ws, t, "first", truth)
    for _ in decision.LOOKS[1:] if looks else ():
        rows = {(r.exercise, r.index): r for r in t.rows}
        grow = [i for i, w in enumerate(ws) if extends(rows[w.exercise, w.index].verdict)]
        if not grow:
            break
        for i in grow:
            seen[i] = decision.next_look(rows[ws[i].exercise, ws[i].index].verdict.looked[0])
        for i, w in enumerate(ws):   # the A/A control, brought to each look a claim is brought to (make decide)
            if w.control:
                seen[i] = max(seen[i], max(seen[j] for j in grow))
        t = table(results(ws, draws, seen, exercises, pool))
    _count(out, ws, t, "looks", truth)
    for r in t.rows:
        if r.verdict.looked:
            out.looks[r.verdict.looked[0]] += 1
            if r.verdict.control:
                out.control_looked = max(out.control_looked, r.verdict.looked[0])
    return out


def false_firm(w: World, v: claims.Verdict) -> bool:
    """Whether a verdict on a claim on its boundary is a false one: any firm verdict, but for a lesson's single
    number, whose boundary (delta from ours) makes "reproduced" false and "not reproduced" true, and at its true
    value (offset 0) the other way round."""
    if w.single:
        return v.verdict == (decision.Outcome.REPRODUCED if w.offset else decision.Outcome.NOT_REPRODUCED)
    return v.verdict in FIRM


def _count(out: Tally, ws: list[World], t, when: str, truth: list[World] | None = None) -> None:
    rows = {(r.exercise, r.index): r for r in t.rows}
    firm_claim = firm_control = False
    paths = set()
    false = firm = 0
    for w, real in zip(ws, truth or ws):
        v = rows[w.exercise, w.index].verdict
        if w.control:
            firm_control |= any(c.verdict in FIRM for c in v.comparisons)
            continue
        if not w.counted:
            continue
        on_boundary = real is w
        wrong = on_boundary and false_firm(w, v)
        if wrong:
            firm_claim = True
            getattr(out, f"claims_{when}")[w.exercise, w.index] += 1
            paths |= {c.method for c in v.comparisons}
        false += wrong
        firm += v.verdict in FIRM
        if v.verdict == decision.Outcome.REPRODUCED:
            getattr(out, f"reproduced_{when}")[w.exercise, w.index] += 1
        if v.verdict == decision.Outcome.NOT_REPRODUCED:
            getattr(out, f"not_reproduced_{when}")[w.exercise, w.index] += 1
    setattr(out, f"any_{when}", int(firm_claim))
    setattr(out, f"control_{when}", int(firm_control))
    setattr(out, f"fdp_{when}", false / firm if firm else 0.0)
    getattr(out, f"paths_{when}").update(paths)


def run(originals: dict[str, Exercise], studies: int, seed: int = 0, effect: float = 0.0, at_value: bool = False,
        looks: bool = True, stress: Stress = Stress.NONE, mixed: float = 0.0) \
        -> tuple[Tally, list[World], list[str]]:
    """`studies` studies of the exercises' claims set on their boundary (or at an effect: boundary.worlds), and the
    worlds and the claims that could not be set. `mixed`: the share of claims drawn, each store afresh, at a true
    effect of `effect` (4 sd where none is given), the others on their boundary: the false discovery rate's case."""
    ws, problems = boundary.worlds(originals, 0.0 if mixed else effect, at_value)
    true = boundary.worlds(originals, effect or 4.0)[0] if mixed else None
    exercises = exercises_of(ws, originals)
    rng = np.random.default_rng(seed)
    total = Tally()
    for _ in range(studies):
        truth = [t if rng.random() < mixed else w for w, t in zip(ws, true)] if mixed else None
        total.add(study(ws, exercises, rng, looks, stress, truth))
    return total, ws, problems


def rate(k: int, n: int) -> str:
    """'2.45% (SE 0.16%)'."""
    p = k / n if n else math.nan
    return f"{p:.2%} (SE {math.sqrt(p * (1 - p) / n) if n else math.nan:.2%})"
