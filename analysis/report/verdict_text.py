"""The words of a verdict: what the claims table's columns, notes and preamble say, from the engine's numbers
(analysis.verdicts) and the seeds a comparison would need (analysis.planning).

Every page, tag and notebook frame that shows a verdict reads it through these functions, so that one verdict is
said one way. The notes are written when read, not when judged: a note names the seeds a comparison would need, a
power calculation each, and a table is settled several times before it is read (the calibration's thousands of
times without being read).
"""
import numpy as np
import pandas as pd

from analysis import planning
from analysis.report import numbers
from analysis.verdicts import claim_kinds, decision, stats
from analysis.verdicts.claims import (
    DETERMINISTIC, FINDING, INDICATIVE, MEANS, NOT_REPRODUCED, REPRODUCED, WITHIN_NOISE, Comparison, Evaluation,
    Prediction, Verdict,
)
from analysis.verdicts.claims_table import Table
from analysis.verdicts.decision import Outcome

# The table's guarantee and family, as the report's first screen and the claims table's preamble say them.
METHOD = "Benjamini-Hochberg"
GUARANTEE = ("Of the firm verdicts in this table, at most 5% are expected to be wrong (a false discovery rate, "
             "over every comparison of the exercise files)")
FAMILY = ("every comparison of every check and every value claim in the exercise files, fixed from the files before "
          "any run")
OUTSIDE = ("findings and questions (an interval and a wording: unadjusted, descriptive), deterministic checks (a "
           "count, the settings' arithmetic: every seed gives the same number, no error to control; shown apart), "
           "predictions and the A/A control (its own family, at its own level)")

# Where a lesson's single number's evaluation noise departs from the plain case (claims.Evaluation), in words.
EVALUATION = {
    Evaluation.NOT_LOGGED: "per-window values are not logged, so the evaluation's own noise is not in the prediction "
                           "interval",
    Evaluation.FINAL_STANDS_IN: "per-window values are logged only at the end of the run: its per-window spread "
                                "stands for this step's",
    Evaluation.VALIDATION_STANDS_IN: "its per-window values are not logged: the final validation's per-window spread "
                                     "stands for its",
    Evaluation.FIXED_WINDOWS: "scored on as many fixed windows as the lesson's, whose error, common to our seeds, is "
                              "in the prediction interval beside the lesson's own",
    Evaluation.LESSON_UNSTATED: "the lesson's own evaluation is not stated (`windows:`), so its noise is not "
                                "included",
}

COLUMNS = ["exercise", "claim", "lessons", "ours", "margin (interval)", "method", "seeds", "p", "p (adjusted)",
           "verdict", "note"]


def summary(table: Table, exercise: str | None = None) -> str:
    """'12 reproduced, 3 within seed noise, ...': the table's, or one exercise's."""
    return ", ".join(f"{n} {k}" for k, n in table.counts(exercise).items()) or "no claims"


def indicative(n: int) -> str:
    """The verdict column's words for a comparison with too few seeds."""
    return f"{Outcome.INDICATIVE} ({n} seed{'s' * (n != 1)})"


# --- one comparison ------------------------------------------------------------------------------------------
def comparison_interval(c: Comparison) -> str:
    """The margin and its interval, at the level the verdict uses where the table set one (else 95%); of a lesson's
    single number, our mean and our prediction interval for one more run, beside the lesson's number and delta."""
    d = c.difference
    if d is None:
        return ""
    if not isinstance(c, Prediction):
        return numbers.interval(d, level=c.level)
    if len(c.values) < 2:
        return ""
    mean = float(np.mean(c.values))
    band = f"the lesson's {numbers.fmt(c.value)}, delta {c.delta:.3g}"
    if d.method == stats.SIGN:
        return f"{numbers.fmt(mean)} (every seed alike: within ±{c.delta:.3g} on {d.held} of {d.n_a}; {band})"
    level = c.level if c.level is not None else 1 - stats.CONFIDENCE
    low, high = c.band(level)
    return f"{numbers.fmt(mean)} ({numbers.fmt(low)} to {numbers.fmt(high)} at {numbers.percent(1 - level)}; {band})"


def reading(c: Comparison) -> str:
    """A finding's reading of one comparison: the left side higher or lower than the right, or undetermined, at
    95%."""
    d = c.difference
    left, right = c.sides
    if d is not None and d.method == stats.SIGN:
        return f"{left} against {right}: {numbers.wording(d)}"
    if d is None or (d.low is None and not d.exact):
        return f"{left} against {right}: undetermined ({c.n or 1} seed{'s' * ((c.n or 1) != 1)})"
    if d.exact:
        return f"{left} is {'higher' if d.direction * (-1 if c.flip else 1) > 0 else 'lower'} than {right}" \
            if d.diff else f"{left} against {right}: undetermined"
    low, high = (-d.high, -d.low) if c.flip else (d.low, d.high)   # of left − right
    if low > 0 or high < 0:
        return f"{left} is {'higher' if low > 0 else 'lower'} than {right}"
    return f"{left} against {right}: undetermined"


# --- one verdict's columns -----------------------------------------------------------------------------------
def wording(v: Verdict) -> str:
    """A finding's reading, "; " between comparisons; the A/A control's count of firm comparisons."""
    if v.control:
        return f"A/A control: {sum(c.verdict in decision.FIRM for c in v.comparisons)} of {len(v.comparisons)} " \
               f"comparisons firm"
    if v.finding:
        return "; ".join(reading(c) for c in v.comparisons if c.method != MEANS)
    return ""


def interval(v: Verdict) -> str:
    """Each comparison's margin with its interval ("; " between pairs of a chain); of a deterministic check,
    whether each comparison holds."""
    if v.deterministic:
        return "; ".join(f"{c.label}: {'holds' if c.holds else 'fails'}" for c in v.comparisons)
    shown = [(c, comparison_interval(c)) for c in v.comparisons]
    shown = [(c, text) for c, text in shown if text]
    if len(shown) == 1:
        return shown[0][1]
    return "; ".join(f"{c.label}: {text}" for c, text in shown)


def method(v: Verdict) -> str:
    """The tests: paired t, Welch t, one-sample t, sign test, prediction interval, means only; deterministic."""
    if not v.comparisons:
        return ""
    return DETERMINISTIC if v.deterministic else ", ".join(dict.fromkeys(c.method for c in v.comparisons))


def _seed_counts(v: Verdict) -> dict[str, int]:
    """Seeds per variant over the verdict's comparisons."""
    counts = {}
    for c in v.comparisons:
        counts.update(c.seeds)
    return counts


def seeds(v: Verdict) -> str:
    """Seeds per variant: "3", or "base 3, nopos 2" when the counts differ."""
    counts = _seed_counts(v)
    if len(set(counts.values())) == 1:
        return str(next(iter(counts.values())))
    return ", ".join(f"{k} {n}" for k, n in counts.items())


def label(v: Verdict) -> str:
    """The verdict column's words: 'indicative (1 seed)', 'finding: h4 lower than h1', or the verdict."""
    if v.verdict == INDICATIVE:
        return indicative(min((c.n for c in v.comparisons if c.n is not None), default=1)) \
            if any(c.n is not None for c in v.comparisons) else f"{INDICATIVE} ({MEANS})"
    if v.verdict == FINDING:
        said = wording(v)
        return f"{FINDING}: {said}" if said else str(FINDING)
    return str(v.verdict)


def p(v: Verdict) -> str:
    """The family members' raw p at the last look, '; ' between comparisons."""
    return "; ".join(f"{c.raw_p:.2g}" for c in v.comparisons if c.family and c.raw_p is not None)


def p_adjusted(v: Verdict) -> str:
    return "; ".join(f"{c.p_adjusted:.2g}" for c in v.comparisons if c.p_adjusted is not None)


def note(v: Verdict) -> str:
    """What the verdict needs said beside it: why it was not judged, and what its comparisons need said."""
    return "; ".join(filter(None, [v.remark, *_notes(v)]))


def _notes(v: Verdict) -> list[str]:
    """What the verdict needs said beside it, from its comparisons."""
    cs, notes = v.comparisons, []
    if not cs:
        return notes
    if len(set(_seed_counts(v).values())) > 1:
        notes.append(f"the variants compared have different numbers of seeds ({seeds(v)})")
    if v.control:
        notes.append("an A/A control: identical settings, so a firm comparison is a false one; each comparison in the "
                     "control's own family: " + "; ".join(f"{c.label}: {c.verdict} (p {c.raw_p:.2g}, adjusted "
                                                          f"{c.p_adjusted:.2g})" if c.raw_p is not None and
                                                          c.p_adjusted is not None else f"{c.label}: {c.verdict}"
                                                          for c in cs))
        return notes
    if v.deterministic:
        notes.append("a deterministic check: every seed gives the same numbers, so there is no error to control; "
                     "outside the table's family, shown apart")
        if v.verdict == NOT_REPRODUCED:
            notes.append(f"check: {v.check}")
        return notes
    for c in cs if not v.finding else ():
        notes += _comparison_note(c)
    fixed = list(dict.fromkeys(k for c in cs for k in c.fixed_windows))
    if fixed:
        notes.append(f"{', '.join(fixed)}: scored on fixed windows, the same for every run, whose per-window values "
                     f"are not logged: the interval is for those windows")
    if v.looked and not v.finding:
        notes += _look_note(*v.looked)
    if any(c.method == stats.ONE_SEED for c in cs):
        notes.append(numbers.NO_INTERVAL)
    if v.finding:
        notes.append(f"a finding, not a verdict: {wording(v) or 'no interval'} ({numbers.percent(stats.CONFIDENCE)} "
                     f"interval, {numbers.DESCRIPTIVE}: outside the table's family)")
    if v.verdict == NOT_REPRODUCED and not notes:
        notes.append(f"check: {v.check}")
    return notes


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
    if d is None:
        return [f"{c.text}: means only, no per-seed values: {INDICATIVE}, never a verdict; the means "
                f"{'hold' if c.holds else 'fail'}"]
    if verdict == INDICATIVE:
        return [f"{c.text}: {indicative(c.n or 1)}, fewer than the {decision.MIN_SEEDS} a verdict needs; the "
                f"means {'hold' if c.holds else 'fail'}"]
    level = planning.plan_level(c)
    need = planning.needed(c) if verdict == WITHIN_NOISE else None
    more = (f"about {need} seeds per variant would give {decision.POWER:.0%} power at the level its next look "
            f"needs (p < {level:.2g}); `make decide` adds them in rounds whose error the table holds") if need else \
        f"no number of seeds up to 100 would decide it at the level its next look needs (p < {level:.2g})"
    if decision.next_look(c.n or 0) is None:
        more = f"at the last look ({c.n} seeds): no more seeds are added"
    if isinstance(c, Prediction):
        return _prediction_note(c, verdict, more)
    if d.exact:
        if verdict != WITHIN_NOISE:
            return []
        what = f"holds on {d.held} of {d.n_a} seeds" if d.method == stats.SIGN else \
            f"no spread on either side ({d.n_a} and {d.n_b} seeds)"
        least = decision.sign_p(d.n_a, d.n_a) if d.method == stats.SIGN else decision.separation_p(d.n_a, d.n_b)
        return [f"{c.text}: {what}: no spread for a t-test, so the exact {d.method} (its least p at these seeds "
                f"{least:.2g}, p {d.p:.2g}); {more}"]
    if verdict == WITHIN_NOISE:
        side = "the means hold, but" if c.holds else "the means fail, but"
        shown = numbers.percent(1 - c.level) if c.level is not None else "95%"
        if d.p < decision.ALPHA:
            q = c.p if c.p_adjusted is None else c.p_adjusted
            return [f"{c.text}: {side} not at the level a firm verdict needs here (the {shown} interval holds zero; p "
                    f"{d.p:.2g}, for the verdict {q:.2g}, the level spent over the looks and shared over the table); "
                    f"{more}"]
        if planning.windows_hold_zero(d, level):
            return [f"{c.text}: {side} the validation windows' own error (se {d.se_windows:.3f}) holds zero: more "
                    f"seeds cannot resolve it, more validation windows could"]
        return [f"{c.text}: {side} the {shown} interval holds zero over {d.n_a} seeds; {more}"]
    if verdict in decision.FIRM and c.looks and len(c.looks) > 1:
        n = min(c.looks, key=lambda k: c.looks[k] / decision.SPEND[decision.LOOKS.index(k)])
        if n != max(c.looks):   # its sequential p is an earlier look's: say so, the interval shown is the last's
            return [f"{c.text}: decided at the look of {n} seeds (p {c.looks[n]:.2g} there, over that look's share "
                    f"of the level); the interval shown is the last look's"]
    if verdict == NOT_REPRODUCED and d.low is not None:
        return [f"{c.text}: the {numbers.percent(1 - c.level) if c.level is not None else '95%'} interval lies on the "
                f"wrong side of zero"]
    if c.holds != (verdict == REPRODUCED):
        return [f"{c.text}: the means {'hold' if c.holds else 'fail'}, the seeds' test says otherwise"]
    return []


def _prediction_note(c: Prediction, verdict: Outcome, more: str) -> list[str]:
    """What a lesson's single number's verdict needs said: what reproduced means for it, and the evaluation's noise."""
    notes = [f"{c.number}: {EVALUATION[e]}" for e in c.evaluation]
    if verdict == NOT_REPRODUCED:
        notes.append(f"{c.label}: outside our prediction interval for one more run: the lesson's number is no draw "
                     f"of our setup")
    elif verdict == WITHIN_NOISE:
        notes.append(f"{c.label}: inside our prediction interval for one more run, but our runs cannot yet tell "
                     f"it from a number {c.delta:.3g} away (the claim's delta); failing to reject is not "
                     f"reproducing: {more}")
    return notes


# --- the table -----------------------------------------------------------------------------------------------
def frame(table: Table) -> pd.DataFrame:
    """One row per claim, the report's columns."""
    rows = [{"exercise": r.exercise, "claim": r.verdict.text, "lessons": r.verdict.lesson or "-",
             "ours": numbers.ours(r.verdict.ours) or "-", "margin (interval)": interval(r.verdict) or "-",
             "method": method(r.verdict) or "-", "seeds": seeds(r.verdict) or "-", "p": p(r.verdict) or "-",
             "p (adjusted)": p_adjusted(r.verdict) or "-", "verdict": label(r.verdict) or "-",
             "note": note(r.verdict)} for r in table.rows]
    return pd.DataFrame(rows, columns=COLUMNS)


def preamble(table: Table) -> str:
    """The family, how the level is shared and spent, and what lies outside, in words, for the report."""
    slots = table.counted.slots.get(claim_kinds.TABLE, {})
    members = ", ".join(f"{name} {m}" for name, m in slots.items())
    apart = [f"{r.exercise}: {r.claim.text}" for r in table.rows if r.verdict.deterministic]
    return (f"{GUARANTEE}. The family is {FAMILY}: {table.counted.total(claim_kinds.TABLE)} "
            f"comparisons ({members}), adjusted together by {METHOD}'s step-up, a comparison not judged "
            f"counting as p = 1 (so a report of fewer exercises is never firmer than the full one's); `make "
            f"calibrate` measures the rate through this table (docs/claims.md). Each comparison's seeds' variance "
            f"is moderated by its metric's prior, pooled over every variant that measures it (empirical Bayes, as "
            f"limma's moderated t), so that 3 seeds borrow the other variants' degrees of freedom where their "
            f"variances agree. A verdict follows the adjusted p, and each interval is shown at the level that "
            f"verdict uses at its last look (named beside it), cut to where its quantity can lie. Seeds are "
            f"added only at fixed looks ({', '.join(map(str, decision.LOOKS))} seeds per variant; `make decide`), "
            f"the level spent over them ({', '.join(f'{w:.3g}' for w in decision.SPEND)} of it): a comparison's "
            f"p is the least of its looks' p, each divided by its look's share. A firm verdict needs "
            f"{decision.MIN_SEEDS} seeds. A lesson's single number is reproduced when the two one-sided tests "
            f"put it within the claim's delta of our mean (set from the lesson's words), not reproduced when it "
            f"lies outside our prediction interval for one more run. Outside the family: {OUTSIDE}"
            + (f"; the deterministic checks here: {'; '.join(apart)}" if apart else "") +
            " (analysis/verdicts/decision.py says why each of these).")
