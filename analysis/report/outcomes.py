"""The verdict engine's outcomes as the report shows them: a colour and a CSS class each, and the claims counted by
outcome with the lessons' claims and ours apart.

Generic over analysis.verdicts.decision.Outcome: an outcome the engine adds takes the next spare colour, its class,
its place in the legend and in the counts, with no change here. Every page that counts claims (the report's first
screen, docs/results.md, docs/lesson-claims.md) counts them with `counts` below.
"""
import re
from collections import Counter

from analysis import verdicts
from analysis.verdicts.decision import Outcome
from lm.settings.claims import Source

# The colours of the outcomes the report knew when it was written: firm answers strong, the rest muted.
KNOWN = {
    Outcome.REPRODUCED: "#3b9a4a",
    Outcome.NOT_REPRODUCED: "#d2463b",
    Outcome.WITHIN_NOISE: "#e3ad2d",
    Outcome.FINDING: "#4c7fcf",
    Outcome.INDICATIVE: "#a9a9a9",
    Outcome.NOT_RUN: "#dedede",
    Outcome.NOT_APPLICABLE: "#c9bfe3",
    Outcome.NOT_MEASURED: "#cfd8dc",
}
# An outcome added later takes these in the engine's order.
SPARE = ["#8e5cc7", "#1f9e9e", "#c4741e", "#5d7285", "#b04f86", "#7a8c2e"]
# On these the cell's number is dark; on the others white.
LIGHT = {Outcome.NOT_RUN, Outcome.NOT_APPLICABLE, Outcome.NOT_MEASURED, Outcome.WITHIN_NOISE}
GROUPS = {Source.LESSON: "the lessons' claims", Source.OURS: "ours"}


def colours(found=()) -> dict[str, str]:
    """Every outcome's colour, in the engine's order, then those of `found` the engine does not name (a table's
    verdict the report has no word for): the spare colours in turn, grey when they run out."""
    spare = iter(SPARE)
    named = {str(o): KNOWN.get(o) or next(spare, "#888888") for o in Outcome}
    return {**named, **{str(o): next(spare, "#888888") for o in dict.fromkeys(found) if str(o) not in named}}


def slug(outcome) -> str:
    """An outcome's CSS class: 'within seed noise' is within-seed-noise."""
    return re.sub(r"[^a-z0-9]+", "-", str(outcome).lower()).strip("-") or "none"


def css(found=()) -> str:
    """The classes the report colours a verdict with, for the engine's outcomes, or with `found` for those of
    `found` it does not name: `v-<slug>` on a grid cell or a chip, `td.v-<slug>` on a table's verdict cell (a
    lighter tint of the same colour)."""
    chosen = colours(found)
    if found:
        chosen = {o: c for o, c in chosen.items() if o in {str(f) for f in found} - {str(n) for n in Outcome}}
    out = []
    for outcome, colour in chosen.items():
        text = "#222" if outcome in {str(o) for o in LIGHT} else "#fff"
        out.append(f".cell.v-{slug(outcome)}, .chip.v-{slug(outcome)} {{ background-color: {colour}; color: {text}; }}")
        out.append(f"td.v-{slug(outcome)} {{ background-color: {colour}33; }}")
    return "\n".join(out)


# A claim the engine shows without judging it (a prediction, ours beside the lesson's figure): it has no verdict.
SHOWN = "shown, not judged"


def outcome(row: verdicts.Row) -> str:
    """The row's outcome, as the engine names it; SHOWN where it gives none."""
    return str(row.verdict.verdict) if row.verdict.verdict else SHOWN


def counts(table: verdicts.Table, exercise: str | None = None) -> dict[Source, dict[str, int]]:
    """Claims per outcome, the lessons' and ours apart, each in the engine's order of outcomes (none left out
    that occurs; those that do not, left out)."""
    rows = [r for r in (table.rows if exercise is None else table.of(exercise)) if r.counted]
    out = {}
    for source in Source:
        found = Counter(outcome(r) for r in rows if r.claim.source == source)
        out[source] = {str(o): found[str(o)] for o in Outcome if found[str(o)]}
        out[source].update({k: n for k, n in found.items() if k not in out[source]})
    return out


def summary(found: dict[str, int]) -> str:
    """'12 reproduced, 3 within seed noise': one group's counts in words."""
    return ", ".join(f"{n} {k}" for k, n in found.items()) or "none"
