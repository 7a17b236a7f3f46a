"""A claim of an exercise file: the fields it may set and its kind, which follows from the fields it sets. The
exercise file's schema (exercise_file.py) is built from Claim's fields, so a new kind's field is added here alone;
the verdict engine judges each kind by its entry in analysis/verdicts/claim_kinds.py."""
from dataclasses import dataclass
from enum import Enum, StrEnum


class Source(str, Enum):
    """Whose claim it is: a lesson's (its `lesson:` quotes the lesson word for word), or our own inference from
    the lessons (a knock-out ordering, a comparison across exercises, an answer to a question the lesson only asks),
    which says why in `why:` and is not counted as a lesson's claim."""
    LESSON = "lesson"
    OURS = "ours"


class ClaimKind(StrEnum):
    """What a claim is, from the fields it sets (CLAIM_FIELDS). The verdict engine judges each kind by its own entry
    (analysis/verdicts/claim_kinds.py)."""
    QUESTION = "question"      # a lesson's question: the variant with the best value of a metric
    VALUE = "value"            # a lesson's single number, against our prediction interval for one more run
    CONTROL = "control"        # an A/A control: two numbers of identical settings, through every path a claim takes
    DETERMINISTIC = "deterministic"  # a check every seed gives alike (a count, the settings' arithmetic): no error
    FINDING = "finding"        # a comparison no lesson makes (or asked, not answered): an interval and a wording
    CHECK = "check"            # a condition on our numbers: reproduced when it holds
    PREDICTION = "prediction"  # worked out before running: shown beside the lesson's figure, no verdict
    SHOWN = "shown"            # ours beside the lesson's figure, nothing to judge


@dataclass(frozen=True)
class ClaimFields:
    """A kind's fields in the YAML: those that mark it (all set), those it needs, those that must be numbers, and
    those it cannot have; and whether its claims get a verdict that seeds can make firm (decided), which is where a
    suite spends its seeds (lm/settings/needs.py decided)."""
    marks: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    decided: bool = False


# A claim is of the first kind, in this order, whose marking fields it all sets; the last marks every claim.
CLAIM_FIELDS = {
    ClaimKind.QUESTION: ClaimFields(marks=("answer",)),
    ClaimKind.VALUE: ClaimFields(marks=("value",), needs=("ours", "delta"), numbers=("value", "delta"),
                                 excludes=("check",), decided=True),
    ClaimKind.CONTROL: ClaimFields(marks=("control",), needs=("ours",), excludes=("check", "windows", "delta"),
                                   decided=True),
    ClaimKind.DETERMINISTIC: ClaimFields(marks=("deterministic", "check"), excludes=("finding", "windows", "delta")),
    ClaimKind.FINDING: ClaimFields(marks=("finding", "check"), excludes=("windows", "delta")),
    ClaimKind.CHECK: ClaimFields(marks=("check",), excludes=("windows", "delta"), decided=True),
    ClaimKind.PREDICTION: ClaimFields(marks=("prediction",)),
    ClaimKind.SHOWN: ClaimFields(),
}


@dataclass
class Claim:
    """One claim of an exercise, its fields as the YAML gives them; what it is follows from which it sets (kind)."""
    text: str
    check: str | None = None    # a condition: reproduced when it holds
    ours: str | None = None     # the expression whose value is shown beside the lesson's
    lesson: str | None = None   # the lesson's own words, verbatim (parts joined by "…"): tests/suite/test_quotes.py
    source: Source = Source.LESSON
    why: str | None = None      # for source: ours, the reason the claim is ours and not the lesson's
    answer: str | None = None   # for a question: the metric whose best variant is the answer
    best: str = "min"
    prediction: bool = False    # worked out before running, shown beside the lesson's figure without a verdict
    value: float | None = None  # a lesson's single number, judged as one draw: `ours` names our per-seed metric
    delta: float | None = None  # for a value: how far from the lesson's number ours may lie and still be it, set from
    #                             the lesson's words or the quantity's meaning (its YAML comment says which), never
    #                             from our runs; "reproduced" needs our runs to tell a number this far away
    windows: int | None = None  # for a value: how many windows the lesson's number averages (its own evaluation,
    #                             whose noise is part of the prediction); unset: the lesson's number is not an average
    #                             over windows (a probe, a count) or its evaluation is not known
    deterministic: bool = False  # a check whose numbers every seed gives alike: no error to control, shown apart
    control: bool = False       # an A/A control: `ours` names two numbers of identical settings
    finding: bool = False       # a question or a comparison no lesson makes: an interval and a wording (higher,
    #                             lower, undetermined), never reproduced or not

    def sets(self, name: str) -> bool:
        """Whether the YAML gave the field a value: a number (0 too), a text, or true."""
        value = getattr(self, name)
        return value is not None and value is not False and value != ""

    @property
    def kind(self) -> ClaimKind:
        return next(k for k, f in CLAIM_FIELDS.items() if all(self.sets(m) for m in f.marks))

    def problem(self) -> str | None:
        """What its kind needs that it lacks, or has that it cannot, in words; None when it is whole."""
        kind = self.kind
        fields = CLAIM_FIELDS[kind]
        wrong = [n for n in fields.needs if not self.sets(n)]
        wrong += [n for n in fields.numbers if not isinstance(getattr(self, n), (int, float))]
        wrong += [n for n in fields.excludes if self.sets(n)]
        if self.sets("delta") and not (isinstance(self.delta, (int, float)) and self.delta > 0):
            return f"has delta: {self.delta!r}: it is how far from the lesson's number ours may lie, a number above 0"
        if self.sets("windows") and not (isinstance(self.windows, int) and self.windows > 0):
            return f"has windows: {self.windows!r}: it is the number of windows the lesson's number averages, a " \
                   f"whole number above 0"
        if not wrong:
            return None
        wants = [f"`{n}`" for n in fields.needs] + [f"a number in `{n}`" for n in fields.numbers] + \
            [f"no `{n}`" for n in fields.excludes]
        listed = ", ".join(wants[:-1]) + " and " * (len(wants) > 1) + wants[-1]
        return f"is a {kind} claim (it sets {', '.join(fields.marks)}): it needs {listed}"
