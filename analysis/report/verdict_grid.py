"""The report's first screen: what the lessons got right, what they got wrong and what is still open, per exercise.

    the grid         a row per exercise, a cell per claim coloured by its outcome (ours round), each cell a link
                     to the claim's row at the head of its exercise's section
    the counts       the lessons' claims and ours apart, by outcome (outcomes.counts)
    not reproduced   one line per claim not reproduced: ours against what the claim asks, and its margin

Every verdict is the verdict table's (analysis.verdicts.table); the outcomes and their colours are outcomes.py's,
so an outcome the engine adds shows here without a change.
"""
import html

from analysis import verdicts
from analysis.report import numbers, outcomes, verdict_text
from analysis.report.document import Doc, figure_file
from analysis.verdicts import claim_kinds
from analysis.verdicts.decision import Outcome
from lm.settings.claims import Source

STYLE = """<style>
.first { margin: 0.4em 0 1em; }
.grid { border-collapse: collapse; margin: 0.3em 0 0.5em; font-size: 13px; }
.grid th, .grid td { border: none; padding: 2px 6px 2px 0; vertical-align: middle; }
.grid th { background: none; text-align: right; white-space: nowrap; font-weight: 600; }
.grid td.title { color: #666; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 26em; }
.cells { display: flex; flex-wrap: wrap; gap: 2px; }
.cell { display: inline-block; width: 21px; height: 21px; line-height: 21px; text-align: center; font-size: 10px;
        border-radius: 3px; text-decoration: none; }
.cell.ours { border-radius: 50%; }
.chip.ours { border-radius: 10px; }
.cell:hover { outline: 2px solid #222; }
.legend, .counts { font-size: 13px; margin: 0.2em 0; }
.chip { display: inline-block; padding: 0 6px; border-radius: 3px; margin: 1px 2px; }
.why { font-size: 13px; margin: 0.3em 0; padding-left: 1.2em; }
.why li { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
tr.target, tr:target { outline: 2px solid #222; }
</style>"""


def anchor(row: verdicts.Row) -> str:
    """The id of a claim's row in its exercise's claims table."""
    return f"claim-{figure_file(row.exercise)}-{row.index}"


def section_anchor(exercise: str) -> str:
    """The id of an exercise's section (a sweep's `sweep/grid` is ex-sweep-grid)."""
    return f"ex-{figure_file(exercise)}"


def why(row: verdicts.Row) -> str:
    """One line on a claim's verdict: ours against what the claim asks (the lesson's number, or the check), and the
    margin with its interval."""
    v, claim = row.verdict, row.claim
    asks = claim_kinds.of(claim).asks(claim).replace("`", "")   # a page's text, not Markdown
    ours, margin, seeds = numbers.ours(v.ours), verdict_text.interval(v), verdict_text.seeds(v)
    parts = [f"ours {ours}" if ours else "", asks, f"margin {margin}" if margin else "",
             f"{seeds} seeds" if seeds else ""]
    return "; ".join(p for p in parts if p)


def _cell(row: verdicts.Row) -> str:
    e = html.escape
    ours = " ours" if row.claim.source == Source.OURS else ""
    said = verdict_text.label(row.verdict) + (", ours" if ours else "")
    tip = f"{row.exercise} #{row.index}: {row.verdict.text} ({said})"
    return (f"<a class='cell v-{outcomes.slug(outcomes.outcome(row))}{ours}' href='#{anchor(row)}' "
            f"title='{e(tip)}'>{row.index}</a>")


def _chips(found: dict[str, int], ours: bool = False) -> str:
    extra = " ours" if ours else ""
    return " ".join(f"<span class='chip v-{outcomes.slug(k)}{extra}'>{n} {html.escape(k)}</span>"
                    for k, n in found.items()) or "none"


def section(doc: Doc, table: verdicts.Table, titles: dict[str, str]) -> None:
    """The grid, the counts and the claims not reproduced; titles: each exercise's title, by name, in the report's
    order."""
    e = html.escape
    rows = []
    for name, title in titles.items():
        cells = "".join(_cell(r) for r in table.of(name)) or "<span class='title'>no claims</span>"
        rows.append(f"<tr><th><a href='#{section_anchor(name)}'>{e(name)}</a></th><td><div class='cells'>{cells}"
                    f"</div></td><td class='title' title='{e(title)}'>{e(title)}</td></tr>")
    counts = outcomes.counts(table)
    shown = [o for o in dict.fromkeys(outcomes.outcome(r) for r in table.rows)]
    legend = " ".join(f"<span class='chip v-{outcomes.slug(o)}'>{e(o)}</span>" for o in _ordered(shown))
    failed = [r for r in table.rows if outcomes.outcome(r) == Outcome.NOT_REPRODUCED]
    lines = "".join(f"<li title='{e(r.verdict.text)}: {e(why(r))}'><a href='#{anchor(r)}'>{e(r.exercise)} #{r.index}"
                    f"</a> {e(r.verdict.text)}{' (ours)' if r.claim.source == Source.OURS else ''}: {e(why(r))}</li>"
                    for r in failed)
    unnamed = outcomes.css(shown)   # an outcome the engine added after this was written
    body = (f"{STYLE}{f'<style>{unnamed}</style>' if unnamed else ''}<div class='first' id='verdicts'>"
            f"<table class='grid'><tbody>{''.join(rows)}</tbody></table>"
            f"<p class='legend'>Each cell is a claim, numbered as in its exercise's section (a click goes to its row): "
            f"{legend}; a round cell is ours, an inference of ours rather than a lesson's words.</p>"
            f"<p class='counts'><b>The guarantee</b>: {e(guarantee())}</p>"
            f"<p class='counts'><b>The lessons' claims</b> ({sum(counts[Source.LESSON].values())}): "
            f"{_chips(counts[Source.LESSON])}</p>"
            f"<p class='counts'><b>Ours</b> ({sum(counts[Source.OURS].values())}): "
            f"{_chips(counts[Source.OURS], ours=True)}</p>"
            + (f"<p class='counts'><b>Not reproduced</b>, and why:</p><ul class='why'>{lines}</ul>" if failed else
               "<p class='counts'><b>Not reproduced</b>: none.</p>")
            + "</div>")
    doc.raw(body, markdown(table, titles))


def markdown(table: verdicts.Table, titles: dict[str, str]) -> str:
    """The first screen in Markdown: each exercise's counts, the counts, and the claims not reproduced."""
    counts = outcomes.counts(table)
    lines = ["| exercise | its claims' verdicts |", "|---|---|"]
    for name in titles:
        found = outcomes.counts(table, name)
        text = "; ".join(f"{outcomes.GROUPS[s]}: {outcomes.summary(c)}" for s, c in found.items() if c)
        lines.append(f"| [{name}](#{section_anchor(name)}) | {text or 'no claims'} |")
    lines += ["", f"**The guarantee**: {guarantee()}", "",
              f"**The lessons' claims** ({sum(counts[Source.LESSON].values())}): "
                  f"{outcomes.summary(counts[Source.LESSON])}.  ",
              f"**Ours** ({sum(counts[Source.OURS].values())}): {outcomes.summary(counts[Source.OURS])}."]
    failed = [r for r in table.rows if outcomes.outcome(r) == Outcome.NOT_REPRODUCED]
    lines += ["", "**Not reproduced**" + (", and why:" if failed else ": none.")]
    lines += [f"- {r.exercise} #{r.index} {r.verdict.text}: {why(r)}" for r in failed]
    return "\n".join(lines)


def guarantee() -> str:
    """What a reader may take from the table, in one sentence: the engine's guarantee, and `make calibrate`'s
    measure of it where one was kept."""
    from analysis.calibration import measured

    kept = measured() or {}
    rate = kept.get("fdr_first")
    said = (f" (measured through this table on {kept['tables']:,} simulated studies, {kept['date']}: "
            f"{rate:.1%} at the first look, {kept['fdr_looks']:.1%} with make decide's looks)") if rate is not None \
        else ""
    return f"{verdict_text.GUARANTEE}{said}; a firm row is one of a set of which one in twenty may be wrong, and a " \
           f"row within seed noise says nothing either way."


def _ordered(found: list[str]) -> list[str]:
    """Outcomes in the engine's order, any it does not name after them."""
    known = [str(o) for o in Outcome]
    return [o for o in known if o in found] + [o for o in found if o not in known]
