"""The claim kinds' registry: how each kind of claim is judged, one entry per lm.spec.exercises.ClaimKind.

A claim's kind follows from the fields it sets in its YAML; what each kind marks itself with, needs and cannot have
is lm/spec/exercises.py's CLAIM_FIELDS, checked when an exercise is loaded, before any run. Its entry here is a
Judging: the function that fills in its verdict from the lookups (claims.py's comparisons, settled into one
verdict), the expression its verdict reads, and whether its verdict is a finding. A new kind is its fields there and
its entry here (docs/contributing.md).
"""
import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from analysis.verdicts import decision
from analysis.verdicts.claims import (
    FINDING,
    NOT_APPLICABLE,
    NOT_MEASURED,
    NOT_REPRODUCED,
    NOT_RUN,
    PREDICTION,
    Comparison,
    Prediction,
    Verdict,
    collect,
    compare,
    fmt,
    settle,
    show,
)
from lm.spec.exercises import Claim, ClaimKind, NotApplicable, NotMeasured, NotRun, evaluate, terms, tree


@dataclass(frozen=True)
class Lookups:
    """What a kind is judged on: the mean lookup, the per-seed lookup (None: the means alone) and the exercise's
    variants (a question ranks them)."""
    lookup: Callable
    per_seed: Callable | None
    variants: Sequence[str]


@dataclass(frozen=True)
class Judging:
    """How one kind of claim is judged: `judge` fills in the verdict from the lookups; `expression` gives the
    expression whose numbers decide it (None: no one expression), which the knock-out section and `make decide`
    read; `finding`: its verdict is a finding, an interval and a wording, outside the table's family."""
    judge: Callable[[Claim, Lookups, Verdict], None]
    expression: Callable[[Claim], str | None] = lambda claim: None
    finding: bool = False


def judge(claim: Claim, lookup, variants=(), seeds=None) -> Verdict:
    """The verdict on one claim, on its own (raw p), as its kind's entry judges it; `variants` are the exercise's,
    `seeds` the per-seed lookup (without it every comparison is read on the means alone)."""
    kind = KINDS[claim.kind]
    ours = show(claim.ours, lookup) if claim.ours else ""
    v = Verdict(claim.text, claim.lesson or "", ours, NOT_RUN, finding=claim.finding or kind.finding,
                check=claim.check or "")
    kind.judge(claim, Lookups(lookup, seeds, variants), v)
    return v


def numbers_read(claim: Claim) -> list[tuple[str, str, int | None]]:
    """The (variant, key, step) numbers a claim's verdict rests on, as its kind says."""
    expr = KINDS[claim.kind].expression(claim)
    return terms(tree(expr).body) if expr else []


def by_comparisons(comparisons: Callable[[Claim, Lookups], list[Comparison]]):
    """A judge from a kind's comparisons: its verdict settled from them; not run, not applicable or not measured
    when a number they read is not there (the note says which); a fault of the check or of ours an error, no
    verdict."""
    def judge_(claim: Claim, r: Lookups, v: Verdict) -> None:
        try:
            found = comparisons(claim, r)
        except NotApplicable as e:
            v.verdict, v.note = NOT_APPLICABLE, str(e)
            return
        except NotMeasured as e:
            v.verdict, v.note = NOT_MEASURED, str(e)
            return
        except NotRun as e:
            v.verdict, v.note = NOT_RUN, str(e)
            return
        except (TypeError, ValueError, ZeroDivisionError) as e:
            raise RuntimeError(f"claim {claim.text!r}: the check could not be evaluated: {type(e).__name__}: {e}") \
                from e
        v.comparisons = found
        settle(v)
    return judge_


def no_verdict(note: str):
    """A judge for a kind shown without a verdict, saying why."""
    def judge_(claim: Claim, r: Lookups, v: Verdict) -> None:
        v.verdict, v.note = "", note
    return judge_


# --- the kinds -------------------------------------------------------------------------------------------
def check(claim: Claim, r: Lookups) -> list[Comparison]:
    """A check's comparisons, each pair of each comparison in it (claims.collect), once the whole check has been
    evaluated on the means (a number it names that is not there is not run)."""
    evaluate(claim.check, r.lookup)
    found = []
    collect(tree(claim.check).body, r.lookup, r.per_seed, found)
    return found


def value(claim: Claim, r: Lookups) -> list[Comparison]:
    """A lesson's single number against our prediction interval: one comparison."""
    return [predict(claim, r.lookup, r.per_seed)]


def predict(claim: Claim, lookup, seeds) -> Prediction:
    """A lesson's single number (claim.value) against the per-seed values of `ours`, one term."""
    named = terms(tree(claim.ours).body)
    if len(named) != 1:
        raise ValueError(f"a value claim's ours names one number, not {claim.ours!r}")
    mean = float(lookup(*named[0]))
    per = (seeds(*named[0]) if seeds else None) or {}
    c = Prediction(f"{fmt(claim.value)} in our prediction interval", True, method=PREDICTION, value=float(claim.value),
                   values=[per[s] for s in sorted(per)], label=f"{fmt(claim.value)} against {claim.ours}")
    c.seeds = {named[0][0]: len(per)} if per else {}
    c.holds = abs(claim.value - mean) <= decision.TOLERANCE * abs(claim.value) if len(per) < 2 else \
        c.verdict != NOT_REPRODUCED
    return c


def answer(claim: Claim, r: Lookups, v: Verdict) -> None:
    """A question, a finding: the variant with the best value of the named metric among those that were run, and
    where there are seeds, the interval of its lead over the runner-up."""
    lookup, seeds = r.lookup, r.per_seed
    values, missing = {}, []
    for variant in r.variants:
        try:
            values[variant] = float(lookup(variant, claim.answer, None))
        except NotRun:
            missing.append(variant)
    if not values:
        v.note = f"no variant has {claim.answer}"
        return
    pick = min if claim.best == "min" else max
    best = pick(values, key=values.get)
    v.ours = f"{best} ({claim.answer} {fmt(values[best])})"
    v.verdict = FINDING
    others = {k: x for k, x in values.items() if k != best}
    if others and seeds is not None:
        runner = pick(others, key=others.get)
        op = ast.Lt() if claim.best == "min" else ast.Gt()
        c = compare(ast.parse(f"{best}.{claim.answer}", mode="eval").body, op,
                    ast.parse(f"{runner}.{claim.answer}", mode="eval").body, lookup, seeds)
        v.comparisons = [c]
        v.ours += f", runner-up {runner} ({fmt(values[runner])})"
        settle(v)
    if missing:
        v.note = "; ".join(filter(None, [v.note, f"not run: {', '.join(missing)}"]))


KINDS: dict[ClaimKind, Judging] = {
    ClaimKind.QUESTION: Judging(answer, finding=True),
    ClaimKind.VALUE: Judging(by_comparisons(value), expression=lambda claim: claim.ours),
    ClaimKind.FINDING: Judging(by_comparisons(check), expression=lambda claim: claim.check, finding=True),
    ClaimKind.CHECK: Judging(by_comparisons(check), expression=lambda claim: claim.check),
    ClaimKind.PREDICTION: Judging(no_verdict("a prediction, worked out before running: no verdict")),
    ClaimKind.SHOWN: Judging(no_verdict("no check")),
}
