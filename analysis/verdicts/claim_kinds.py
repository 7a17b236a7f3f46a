"""The claim kinds' registry: how each kind of claim is judged, one entry per lm.settings.claims.ClaimKind.

A claim's kind follows from the fields it sets in its YAML; what each kind marks itself with, needs and cannot have
is lm/settings/claims.py's CLAIM_FIELDS, checked when an exercise is loaded, before any run. Its entry here is a
Judging: the function that fills in its verdict from the lookups (claims.py's comparisons, settled into one
verdict), the expression its verdict reads, whether its verdict is a finding, and the family its comparisons are
members of with how many it holds, counted from the claim alone (the table's family is fixed before any run). A new
kind is its fields there and its entry here (docs/contributing.md).
"""
import ast
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from analysis.verdicts import bounds, decision, stats, variance
from analysis.verdicts.claims import (
    FINDING,
    NOT_APPLICABLE,
    NOT_MEASURED,
    NOT_RUN,
    PREDICTION,
    Comparison,
    Evaluation,
    Prediction,
    Shown,
    Verdict,
    collect,
    compare,
    count,
    settle,
    shape,
    shown,
    window_scored,
)
from lm.settings.claims import Claim, ClaimKind
from lm.settings.exercises import NotApplicable, NotMeasured, NotRun, evaluate, terms, tree

TABLE, CONTROL = "table", "control"   # the families: the claims', and the A/A control's own


@dataclass(frozen=True)
class Lookups:
    """What a kind is judged on: the mean lookup, the per-seed lookup (None: the means alone), the per-window
    lookup (None: none logged), the exercise's variants (a question ranks them) and each number's prior for the
    seeds' variance (variance.py; None: each comparison on its own seeds)."""
    lookup: Callable
    per_seed: Callable | None
    variants: Sequence[str]
    windows: Callable | None = None
    priors: Callable | None = None


class Placement(StrEnum):
    """Where the calibration sets a kind's claims so that a firm verdict on them is a false one
    (analysis/calibration/boundary.py, one setter for each)."""
    COMPARISONS = "each comparison's expected margin at zero"
    SINGLE_NUMBER = "our setup's mean delta from the lesson's number"
    CONSTANTS = "none: its numbers are constants, no error to control"
    CONTROL = "its two numbers alike"
    NONE = "none: no verdict"


class Marks(StrEnum):
    """What a kind's claims draw on the report's figures (analysis/report/marks.py)."""
    VALUE = "the lesson's number"
    BANDS = "the check's bounds"
    NONE = "nothing"


@dataclass(frozen=True)
class Judging:
    """A kind of claim, whole: `judge` fills in the verdict from the lookups; `expression` gives the expression
    whose numbers decide it (None: no one expression), which the knock-out section and `make decide` read;
    `finding`: its verdict is a finding, an interval and a wording; `family`: the family its comparisons are
    members of (None: outside every family), `slots` how many it holds, from the claim alone; `asks`: what our runs
    are held to, in the YAML's own terms (the docs page and the report's first screen); `placement`: where the
    calibration sets it on its boundary; `marks`: what it draws on the report's figures."""
    judge: Callable[[Claim, Lookups, Verdict], None]
    expression: Callable[[Claim], str | None] = lambda claim: None
    finding: bool = False
    family: str | None = None
    slots: Callable[[Claim], int] = lambda claim: 0
    asks: Callable[[Claim], str] = lambda claim: f"`{claim.ours}`, shown" if claim.ours else "-"
    placement: Placement = Placement.NONE
    marks: Marks = Marks.NONE


def judge(claim: Claim, lookup, variants=(), seeds=None, windows=None, priors=None) -> Verdict:
    """The verdict on one claim, on its own (raw p), as its kind's entry judges it; `variants` are the exercise's,
    `seeds` the per-seed lookup (without it every comparison is read on the means alone, indicative), `windows` the
    per-window lookup, `priors` each number's prior for the seeds' variance."""
    which = claim.kind
    kind = KINDS[which]
    ours = shown(claim.ours, lookup) if claim.ours else Shown()
    v = Verdict(claim.text, claim.lesson or "", ours, NOT_RUN, finding=claim.finding or kind.finding,
                check=claim.check or "", deterministic=which == ClaimKind.DETERMINISTIC,
                control=which == ClaimKind.CONTROL)
    kind.judge(claim, Lookups(lookup, seeds, variants, windows, priors), v)
    for c in v.comparisons if kind.family else ():  # judged alone: the level its look spends (the table shares it)
        last = decision.look(c.n or 0)
        c.level = decision.ALPHA * decision.SPEND[decision.LOOKS.index(last)] if last and c.raw_p is not None \
            else None
    if v.comparisons:
        settle(v)
    return v


def numbers_read(claim: Claim) -> list[tuple[str, str, int | None]]:
    """The (variant, key, step) numbers a claim's verdict rests on, as its kind says."""
    expr = KINDS[claim.kind].expression(claim)
    return terms(tree(expr).body) if expr else []


def slots(claim: Claim) -> tuple[str | None, int]:
    """The family a claim's comparisons are members of, and how many it holds, from the claim alone."""
    kind = KINDS[claim.kind]
    return kind.family, kind.slots(claim) if kind.family else 0


def by_comparisons(comparisons: Callable[[Claim, Lookups], list[Comparison]]):
    """A judge from a kind's comparisons: its verdict settled from them; not run, not applicable or not measured
    when a number they read is not there (the note says which); a fault of the check or of ours an error, no
    verdict."""
    def judge_(claim: Claim, r: Lookups, v: Verdict) -> None:
        try:
            found = comparisons(claim, r)
        except NotApplicable as e:
            v.verdict, v.remark = NOT_APPLICABLE, str(e)
            return
        except NotMeasured as e:
            v.verdict, v.remark = NOT_MEASURED, str(e)
            return
        except NotRun as e:
            v.verdict, v.remark = NOT_RUN, str(e)
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
        v.verdict, v.remark = "", note
    return judge_


# --- the kinds -------------------------------------------------------------------------------------------
def check(claim: Claim, r: Lookups) -> list[Comparison]:
    """A check's comparisons, each pair of each comparison in it (claims.collect), once the whole check has been
    evaluated on the means (a number it names that is not there is not run)."""
    evaluate(claim.check, r.lookup)
    found = []
    collect(shape(claim.check).body, r.lookup, r.per_seed, found, r.windows, r.priors)
    return found


def deterministic(claim: Claim, r: Lookups) -> list[Comparison]:
    """A deterministic check's comparisons: its numbers must be the same on every seed (else its declaration is
    wrong: an error, no verdict); judged on them, no error to control."""
    found = check(claim, r)
    for t in terms(tree(claim.check).body):
        per = (r.per_seed(*t) if r.per_seed else None) or {}
        if len(set(per.values())) > 1:
            raise RuntimeError(f"claim {claim.text!r} is declared deterministic, but {t[0]}.{t[1]} differs between "
                               f"seeds ({', '.join(f'{s}: {x}' for s, x in sorted(per.items()))}): judge it as a check")
    return found


def value(claim: Claim, r: Lookups) -> list[Comparison]:
    """A lesson's single number against our prediction interval: one comparison."""
    return [predict(claim, r.lookup, r.per_seed, r.windows, r.priors)]


def predict(claim: Claim, lookup, seeds, windows=None, priors=None) -> Prediction:
    """A lesson's single number (claim.value) against the per-seed values of `ours`, one term, within the claim's
    delta."""
    named = terms(tree(claim.ours).body)
    if len(named) != 1:
        raise ValueError(f"a value claim's ours names one number, not {claim.ours!r}")
    mean = float(lookup(*named[0]))
    per = (seeds(*named[0]) if seeds else None) or {}
    tau, said = evaluation(claim, named[0], sorted(per), windows)
    prior = (priors(*named[0]) if priors else None) or variance.NONE
    c = Prediction(f"{claim.value:g} within {claim.delta:g} of ours", True, method=PREDICTION,
                   value=float(claim.value), values=[float(per[s]) for s in sorted(per)],
                   label=f"{claim.value:g} against {claim.ours}", tau=tau, delta=float(claim.delta),
                   evaluation=said, number=claim.ours, prior=prior, range=bounds.of(named[0][1]))
    c.seeds = {named[0][0]: len(per)} if per else {}
    c.holds = abs(claim.value - mean) <= c.delta
    return c


def evaluation(claim: Claim, term: tuple[str, str, int | None], seeds: list[int], windows) \
        -> tuple[float, tuple[Evaluation, ...]]:
    """The evaluation's noise in a lesson's single number against our mean, and where it departs from the plain case:
    the lesson averaged its number over `claim.windows` windows, so it carries the per-window variance over that
    many; our mean carries its own windows' where they were a sample whose per-window values are logged. The
    per-window variance is our runs' at that step where logged, else at the end of the run."""
    variant, key, step = term
    if not window_scored(key):
        return 0.0, ()
    here = (windows(*term) if windows else None) or {}
    final = (windows(variant, key, None) if windows and step is not None else None) or {}
    # a loss on other windows of the same text (the training text's) spreads over its windows as the validation
    # loss does: the run's final validation stands for it
    stand_in = (windows(variant, "val_loss", None) if windows and key != "val_loss" else None) or {}
    got = here or final or stand_in
    rows = [np.asarray(got[s], float) for s in seeds if s in got]
    if not rows:
        return 0.0, (Evaluation.NOT_LOGGED,)
    variance = float(np.mean([np.var(x, ddof=1) for x in rows]))
    said = []
    if not here:
        said.append(Evaluation.FINAL_STANDS_IN if final else Evaluation.VALIDATION_STANDS_IN)
    if here:
        ours = variance / float(np.mean([len(x) for x in rows]))
    else:   # our curve is scored as the lesson's recipe scores it: on as many windows as the lesson averaged
        ours = variance / claim.windows if claim.windows else 0.0
        said.append(Evaluation.FIXED_WINDOWS)
    lesson = variance / claim.windows if claim.windows else 0.0
    if not claim.windows:
        said.append(Evaluation.LESSON_UNSTATED)
    return math.sqrt(ours + lesson), tuple(said)


def control(claim: Claim, r: Lookups) -> list[Comparison]:
    """An A/A control, two numbers of identical settings (`ours`), through every path a claim can take: two
    variants through Welch's t (as separate samples), the paired t (the i-th seed of each, independent runs, so
    a valid pairing) and a prediction (the right side's first seed as a lesson's single number against the left
    side's seeds, a delta of 0, so that only "not reproduced" can be firm: the same setup); one variant's two numbers
    (exchangeable by the model's symmetry) through the one-sample t of their per-seed difference."""
    named = terms(tree(claim.ours).body)
    if len(named) != 2:
        raise ValueError(f"a control's ours names two numbers, not {claim.ours!r}")
    for t in named:
        r.lookup(*t)   # not run is not run
    (a, b), (pa, pb) = named, [(r.per_seed(*t) if r.per_seed else None) or {} for t in named]
    xa, xb = ([float(p[s]) for s in sorted(p)] for p in (pa, pb))
    left, right = (f"{t[0]}.{t[1]}" + (f"[{t[2]}]" if t[2] is not None else "") for t in named)
    holds = bool(np.mean(xa) < np.mean(xb)) if xa and xb else False
    found = []

    def pr(t) -> variance.Prior:
        return (r.priors(*t) if r.priors else None) or variance.NONE

    def add(label: str, d: stats.Difference | None, seeds: dict[str, int]) -> None:
        c = Comparison(f"{left} < {right} ({label})", holds, d, label=label, sides=(left, right), flip=True,
                       method=d.method if d is not None else stats.ONE_SEED, seeds=seeds)
        found.append(c)

    if a[0] == b[0]:
        common = sorted(set(pa) & set(pb))
        both = variance.combined([(1.0, pr(a)), (1.0, pr(b))])
        add(stats.ONE_SAMPLE, stats.one_sample([pb[s] - pa[s] for s in common], prior=both) if common else None,
            {a[0]: len(common)})
        return found
    k = min(len(xa), len(xb))
    add(stats.WELCH, stats.welch(xb, xa, pr(b), pr(a)) if k else None, {a[0]: len(xa), b[0]: len(xb)})
    add(stats.PAIRED, stats.paired(xb[:k], xa[:k], prior=variance.combined([(1.0, pr(a)), (1.0, pr(b))]))
        if k else None, {a[0]: k, b[0]: k})
    prior = pr(a)
    p = Prediction(f"{right}'s first seed in {left}'s prediction interval", holds, method=PREDICTION,
                   value=xb[0] if xb else 0.0, values=xa, label="prediction", sides=(left, right),
                   seeds={a[0]: len(xa)}, prior=prior, range=bounds.of(a[1]))
    found.append(p)
    return found


def control_slots(claim: Claim) -> int:
    """A control's comparisons: three for two variants (Welch, paired, prediction), one for one variant's two
    numbers (one-sample)."""
    named = terms(tree(claim.ours).body)
    return 3 if len({t[0] for t in named}) > 1 else 1


def answer(claim: Claim, r: Lookups, v: Verdict) -> None:
    """A question, a finding: the variant with the best value of the named metric among those that were run, and
    where there are seeds, the interval of its lead over the runner-up (unadjusted, descriptive)."""
    lookup, seeds = r.lookup, r.per_seed
    values, missing = {}, []
    for variant in r.variants:
        try:
            values[variant] = float(lookup(variant, claim.answer, None))
        except NotRun:
            missing.append(variant)
    if not values:
        v.remark = f"no variant has {claim.answer}"
        return
    pick = min if claim.best == "min" else max
    best = pick(values, key=values.get)
    v.ours = Shown(metric=claim.answer, ranked=((best, values[best]),))
    v.verdict = FINDING
    others = {k: x for k, x in values.items() if k != best}
    if others and seeds is not None:
        runner = pick(others, key=others.get)
        op = ast.Lt() if claim.best == "min" else ast.Gt()
        c = compare(ast.parse(f"{best}.{claim.answer}", mode="eval").body, op,
                    ast.parse(f"{runner}.{claim.answer}", mode="eval").body, lookup, seeds, r.windows, r.priors)
        v.comparisons = [c]
        v.ours = Shown(metric=claim.answer, ranked=((best, values[best]), (runner, values[runner])))
        settle(v)
    if missing:
        v.remark = "; ".join(filter(None, [v.remark, f"not run: {', '.join(missing)}"]))


def checked(claim: Claim) -> str:
    return f"`{claim.check}`"


KINDS: dict[ClaimKind, Judging] = {
    ClaimKind.QUESTION: Judging(
        answer, finding=True,
        asks=lambda claim: f"the variant with the {'least' if claim.best == 'min' else 'largest'} `{claim.answer}`"),
    ClaimKind.VALUE: Judging(
        by_comparisons(value), expression=lambda claim: claim.ours, family=TABLE, slots=lambda claim: 1,
        asks=lambda claim: f"`{claim.ours}` against the lesson's {claim.value:g}, within {claim.delta:g}, as one draw",
        placement=Placement.SINGLE_NUMBER, marks=Marks.VALUE),
    ClaimKind.CONTROL: Judging(
        by_comparisons(control), expression=lambda claim: claim.ours, family=CONTROL, slots=control_slots,
        asks=lambda claim: f"`{claim.ours}` alike, through every path a claim can take", placement=Placement.CONTROL),
    ClaimKind.DETERMINISTIC: Judging(
        by_comparisons(deterministic), expression=lambda claim: claim.check,
        asks=lambda claim: f"{checked(claim)}, on every seed alike", placement=Placement.CONSTANTS, marks=Marks.BANDS),
    ClaimKind.FINDING: Judging(
        by_comparisons(check), expression=lambda claim: claim.check, finding=True,
        asks=lambda claim: f"{checked(claim)} (a finding: an interval, no verdict)", placement=Placement.COMPARISONS),
    ClaimKind.CHECK: Judging(
        by_comparisons(check), expression=lambda claim: claim.check, family=TABLE,
        slots=lambda claim: count(claim.check), asks=checked, placement=Placement.COMPARISONS, marks=Marks.BANDS),
    ClaimKind.PREDICTION: Judging(
        no_verdict("a prediction, worked out before running: no verdict"),
        asks=lambda claim: f"`{claim.ours}`, a prediction: worked out before running, shown, not judged"),
    ClaimKind.SHOWN: Judging(no_verdict("no check")),
}


def of(claim: Claim) -> Judging:
    """A claim's kind, whole."""
    return KINDS[claim.kind]
