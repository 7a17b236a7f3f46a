"""The report's first screen from the verdict table alone (no store): the grid, the counts with the lessons' claims and
ours apart, the claims not reproduced and why; every outcome the engine has, and one it may add, shown; and what the
claims say a figure's numbers should be, read from the claims."""
import re

import pytest

from analysis import verdicts
from analysis.report import marks, outcomes, verdict_grid
from analysis.report.document import Doc
from analysis.verdicts import Numbers
from analysis.verdicts.decision import Outcome
from lm.settings.claims import Source
from lm.settings.exercises import load_all, parse

EXERCISE = """title: "Wider (made up)"
lesson: "000: a made-up exercise"
measures: val_loss
variants: {base: [], wide: [model.n_embd=96]}
claims:
  - text: "The wider model ends lower"
    lesson: "wider is better"
    ours: "[wide.val_loss, base.val_loss]"
    check: "wide.val_loss < base.val_loss"
  - text: "The base model ends below 2"
    lesson: "below 2"
    ours: "base.val_loss"
    check: "base.val_loss < 2"
  - text: "The wider model's loss is 1.5"
    lesson: "1.5"
    ours: "wide.val_loss"
    value: 1.5
    delta: 0.05
  - text: "The wider model ends within a band"
    source: ours
    why: "no lesson says how wide"
    ours: "wide.val_loss"
    check: "1.7 <= wide.val_loss < 1.8 and abs(base.val_loss - 2.5) < 0.1"
"""


@pytest.fixture
def table() -> verdicts.Table:
    ex = parse("wider", EXERCISE, "wider.yaml")
    # margins far beyond the seeds' spread, so that each verdict is firm at 3 seeds (the paired margins differ a
    # little: margins that all agree get the exact sign test, which cannot be firm at 3 seeds)
    final = {"base": {"val_loss": {1: 2.500, 2: 2.501, 3: 2.499}}, "wide": {"val_loss": {1: 1.750, 2: 1.752, 3: 1.747}}}
    return verdicts.table({"wider": Numbers(ex, final)})


def test_the_counts_keep_the_lessons_claims_and_ours_apart(table):
    got = {r.index: str(r.verdict.verdict) for r in table.rows}
    assert got == {1: "reproduced", 2: "not reproduced", 3: "not reproduced", 4: "reproduced"}
    counts = outcomes.counts(table)
    assert counts[Source.LESSON] == {"reproduced": 1, "not reproduced": 2}
    assert counts[Source.OURS] == {"reproduced": 1}
    assert outcomes.summary(counts[Source.LESSON]) == "1 reproduced, 2 not reproduced"


def test_the_grid_has_a_cell_per_claim_in_its_outcomes_colour_linking_to_its_row(table, tmp_path):
    doc = Doc(tmp_path)
    verdict_grid.section(doc, table, {"wider": "Wider (made up)"})
    (kind, page, markdown), = doc.blocks
    cells = re.findall(r"<a class='cell ([^']*)' href='#([^']*)'[^>]*>(\d+)</a>", page)
    assert cells == [("v-reproduced", "claim-wider-1", "1"), ("v-not-reproduced", "claim-wider-2", "2"),
                     ("v-not-reproduced", "claim-wider-3", "3"), ("v-reproduced ours", "claim-wider-4", "4")]
    assert "href='#ex-wider'" in page
    # the counts, apart; one line per claim not reproduced, saying ours against what it asks and the margin
    assert re.search(r"The lessons' claims</b> \(3\):.*1 reproduced.*2 not reproduced", page)
    assert re.search(r"<b>Ours</b> \(1\):.*1 reproduced", page)
    why = re.findall(r"<li title='[^']*'><a href='#(claim-wider-\d)'>wider #\d</a> ([^<]*)</li>", page)
    assert [w[0] for w in why] == ["claim-wider-2", "claim-wider-3"]
    assert "ours 2.500; base.val_loss &lt; 2; margin" in why[0][1]
    assert "ours 1.750; wide.val_loss against the lesson&#x27;s 1.5, within 0.05, as one draw; margin 1.750 (" in why[1][1]
    assert "- wider #2 The base model ends below 2: ours 2.500; base.val_loss < 2; margin" in markdown
    assert "**Ours** (1): 1 reproduced." in markdown


def test_every_outcome_has_its_colour_and_an_outcome_the_engine_adds_shows_too(table, tmp_path):
    colours = outcomes.colours()
    assert list(colours) == [str(o) for o in Outcome] and len(set(colours.values())) == len(Outcome)
    css = outcomes.css()
    assert all(f".cell.v-{outcomes.slug(o)}," in css and f"td.v-{outcomes.slug(o)} " in css for o in Outcome)
    table.rows[0].verdict.verdict = "judged twice"   # an outcome this report was not written for
    doc = Doc(tmp_path)
    verdict_grid.section(doc, table, {"wider": "Wider (made up)"})
    page = doc.blocks[0][1]
    assert "<a class='cell v-judged-twice'" in page and ".cell.v-judged-twice" in page
    assert "<span class='chip v-judged-twice'>judged twice</span>" in page   # in the legend
    assert outcomes.counts(table)[Source.LESSON] == {"not reproduced": 2, "judged twice": 1}


def test_a_figure_marks_what_the_claims_say_read_from_the_claims():
    ex = parse("wider", EXERCISE, "wider.yaml")
    assert marks.of(ex) == [
        {"variant": "base", "key": "val_loss", "step": None, "low": None, "high": 2.0, "text": "the claim: ≤ 2",
         "lesson": False},
        {"variant": "wide", "key": "val_loss", "step": None, "low": 1.5, "high": 1.5, "text": "the lesson: 1.5",
         "lesson": True},
        {"variant": "wide", "key": "val_loss", "step": None, "low": 1.7, "high": 1.8, "text": "our claim: 1.7 to 1.8",
         "lesson": False},
        {"variant": "base", "key": "val_loss", "step": None, "low": pytest.approx(2.4), "high": pytest.approx(2.6),
         "text": "our claim: 2.4 to 2.6", "lesson": False}]
    # the lessons' own numbers, as their claims give them: every value claim of a curve's step is a mark
    baseline = load_all()["baseline"]
    at_steps = {m["step"]: m["low"] for m in marks.of(baseline, {"val_loss"}) if m["lesson"]}
    assert at_steps == {int(c.ours.split("[")[1][:-1]): c.value for c in baseline.claims
                        if c.value is not None and c.ours.startswith("base.val_loss[")}
