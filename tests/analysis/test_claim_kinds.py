"""The claim kinds' registry: a claim's kind from the fields it sets (lm/settings/claims.py's CLAIM_FIELDS, checked
when an exercise is loaded) and each kind's judging (analysis/verdicts/claim_kinds.py's KINDS)."""
import pytest

from analysis.report import numbers
from analysis.report import verdict_text as text
from analysis.verdicts.claim_kinds import KINDS, judge
from analysis.verdicts.claims import FINDING, INDICATIVE
from lm.settings.claims import CLAIM_FIELDS, Claim, ClaimKind
from lm.settings.errors import ConfigError
from lm.settings.exercises import NotRun, load_all, parse

KINDS_BY_FIELDS = [
    (Claim(text="t", answer="val_loss", finding=True), ClaimKind.QUESTION),
    (Claim(text="t", ours="a.x", value=1.746, delta=0.08), ClaimKind.VALUE),
    (Claim(text="t", ours="a.x", value=0, delta=0.1), ClaimKind.VALUE),  # a number, zero too
    (Claim(text="t", ours="[a.x, b.x]", control=True), ClaimKind.CONTROL),
    (Claim(text="t", check="a.n == 3", deterministic=True), ClaimKind.DETERMINISTIC),
    (Claim(text="t", check="a.x < b.x", finding=True), ClaimKind.FINDING),
    (Claim(text="t", check="a.x < b.x"), ClaimKind.CHECK),
    (Claim(text="t", ours="a.x", prediction=True), ClaimKind.PREDICTION),
    (Claim(text="t", ours="a.x", finding=True), ClaimKind.SHOWN),         # a finding with nothing to compare
    (Claim(text="t", ours="a.x", check=""), ClaimKind.SHOWN),
]


def test_every_kind_has_its_fields_and_its_judging():
    assert list(CLAIM_FIELDS) == list(ClaimKind) and set(KINDS) == set(ClaimKind)


@pytest.mark.parametrize("claim,kind", KINDS_BY_FIELDS, ids=[k.value + str(i) for i, (_, k) in
                                                            enumerate(KINDS_BY_FIELDS)])
def test_a_claim_is_of_the_first_kind_whose_fields_it_sets(claim, kind):
    assert claim.kind == kind and claim.problem() is None


def test_every_claim_of_the_exercises_is_of_a_kind_and_whole():
    claims = [c for ex in load_all().values() for c in ex.claims]
    assert all(c.problem() is None for c in claims)
    assert {c.kind for c in claims} >= {ClaimKind.QUESTION, ClaimKind.VALUE, ClaimKind.FINDING, ClaimKind.CHECK,
                                        ClaimKind.PREDICTION}


@pytest.mark.parametrize("fields,missing", [   # the claim's line (6), or its field's (7)
    ("value: 1.746", "is a value claim (it sets value): it needs `ours`"),
    ("value: many\n    ours: a.val_loss", "has value: 'many': input should be a valid number"),  # line 7
    ("value: 1.746\n    ours: a.val_loss\n    delta: 0.08\n    check: a.val_loss > 1",
     "is a value claim (it sets value): it needs `ours`, `delta`, a number in `value`, a number in `delta` and no "
     "`check`"),
])
def test_a_claim_without_what_its_kind_needs_is_one_line_when_its_exercise_loads(fields, missing):
    text = (f"title: t\nlesson: l\nmeasures: m\nvariants: {{a: []}}\n"
            f"claims:\n  - text: Lesson 2's number\n    {fields}\n")
    with pytest.raises(ConfigError) as e:
        parse("mine", text, "mine.yaml")
    message = str(e.value)
    line = 7 if missing.startswith("has value") else 6
    assert message.startswith(f"mine.yaml:{line}: claim \"Lesson 2's number\"… {missing}")
    assert "\n" not in message


MEANS = {("a", "x"): 1.0, ("b", "x"): 2.0}


def lookup(variant, key, step=None):
    if (variant, key) not in MEANS:
        raise NotRun(f"{variant} was not run")
    return MEANS[variant, key]


def test_each_kind_is_judged_by_its_own_entry():
    assert judge(Claim(text="t", check="a.x < b.x"), lookup).verdict == INDICATIVE   # the means alone
    assert judge(Claim(text="t", check="a.x < b.x", finding=True), lookup).verdict == FINDING
    assert numbers.ours(judge(Claim(text="t", answer="x"), lookup, ["a", "b"]).ours) == "a (x 1.000)"
    assert text.note(judge(Claim(text="t", ours="c.x", value=1.0), lookup)) == "c was not run"
    shown = judge(Claim(text="t", ours="a.x", prediction=True), lookup)
    assert (shown.verdict, numbers.ours(shown.ours)) == ("", "1.000")
    assert text.note(shown) == "a prediction, worked out before running: no verdict"
    assert KINDS[ClaimKind.QUESTION].finding and not KINDS[ClaimKind.CHECK].finding


def test_the_kinds_a_suite_spends_seeds_on_are_those_whose_verdicts_the_level_is_spent_on():
    decided = {k for k, fields in CLAIM_FIELDS.items() if fields.decided}
    assert decided == {k for k, judging in KINDS.items() if judging.family is not None}
