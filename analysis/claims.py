"""The lessons' claims against our numbers: each claim's check evaluated on a lookup, and a verdict.

A lookup is `lookup(variant, key, step)`: the mean over seeds of a metric's final value (step None), of the
value logged at `step`, or a tag's most common value; it raises lm.exercises.NotRun for what was not run. A check
that only orders variants (`h4.val_loss < h1.val_loss`) is also read against the seeds, given `seeds(variant, key)`:
means in the claimed order whose difference the seeds cannot tell from zero do not reproduce a claim.
"""
import re
from dataclasses import dataclass

from analysis import stats
from lm.exercises import Claim, NotApplicable, NotRun, evaluate

REPRODUCED, NOT_REPRODUCED, NOT_RUN, ANSWERED = "reproduced", "not reproduced", "not run", "answered"
WITHIN_NOISE = "within seed noise"
NOT_APPLICABLE = "not applicable"   # to the corpus the runs read; the note says why
VERDICTS = (REPRODUCED, WITHIN_NOISE, NOT_REPRODUCED, NOT_RUN, ANSWERED, NOT_APPLICABLE)
# Shares of 1, shown as percentages like the lessons give them.
PERCENT = {"probe_top1_p", "word_validity", "word_validity_stripped", "real_word_share", "heads_offset1_share_max",
           "heads_offset2_share_max"}


@dataclass
class Verdict:
    text: str
    lesson: str
    ours: str
    verdict: str
    note: str = ""


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


def judge(claim: Claim, lookup, variants=(), seeds=None) -> Verdict:
    """The verdict on one claim; `variants` are the exercise's, for a question's answer."""
    ours = show(claim.ours, lookup) if claim.ours else ""
    v = Verdict(claim.text, claim.lesson or "", ours, NOT_RUN)
    if claim.answer:
        return answer(claim, lookup, variants, v)
    if not claim.check:
        v.verdict, v.note = "", "no check"
        return v
    try:
        v.verdict = REPRODUCED if evaluate(claim.check, lookup) else NOT_REPRODUCED
    except NotApplicable as e:
        v.verdict, v.note = NOT_APPLICABLE, str(e)
    except NotRun as e:
        v.note = str(e)
    except (TypeError, ValueError, ZeroDivisionError) as e:
        v.note = f"the check could not be evaluated: {e}"
    if v.verdict in (REPRODUCED, NOT_REPRODUCED) and seeds is not None:
        noise(claim.check, seeds, v)
    if v.verdict == NOT_REPRODUCED and v.note == "":
        v.note = f"check: {claim.check}"
    return v


ORDER = re.compile(r"\s*[<>]\s*")
TERM = re.compile(r"(\w+)\.(\w+)")


def noise(check: str, seeds, v: Verdict) -> None:
    """For a check that orders variants' final values: a pair whose 95% interval over seeds holds zero makes the
    verdict 'within seed noise', whichever way the means fell."""
    terms = [TERM.fullmatch(t.strip()) for t in ORDER.split(check)]
    if len(terms) < 2 or not all(terms):
        return
    for a, b in zip(terms, terms[1:]):
        values = seeds(*a.groups()), seeds(*b.groups())
        if not all(values):  # a number that is not a run's final metric (a tag, a budget): means only
            return
        d = stats.welch(*values)
        if d.wording == stats.ONE_SEED:
            v.note = "one seed: no interval"
        elif d.wording == stats.CANNOT_TELL:
            v.verdict = WITHIN_NOISE
            v.note = (f"{a.group(1)} − {b.group(1)}: {stats.interval(d)} over {d.n_a} and {d.n_b} seeds; "
                      f"the seeds cannot tell them apart")
            return


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
