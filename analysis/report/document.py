"""The report as a document: written once, rendered as Markdown and as self-contained HTML.

The HTML page is at most WIDTH pixels wide and never scrolls sideways: its text and its tables' cells wrap, a table
too wide for the page scrolls inside its own box, and the figures are drawn to fit (figures.MAX_WIDTH). Text is
written as Markdown (`code`, **strong**): the page renders those marks, so none survives into it as a literal.
"""
import base64
import html
import re
from pathlib import Path

import pandas as pd

from analysis.report import outcomes
from analysis.report.painter import PAINTER, Plot

# The page's width in CSS pixels, its margins included: a 1600-pixel window shows it whole, its scroll bar too.
WIDTH = 1560


def figure_file(name: str) -> str:
    """A figure's file name (no extension): anything but letters, digits, _ and - becomes a dash, so that a sweep's
    name (`sweep/n_head-n_layer`) stays one file in the figures folder."""
    return re.sub(r"[^\w-]+", "-", name)


class Doc:
    def __init__(self, figures_dir: Path, svg: bool = False):
        """figures_dir: where its figures are saved, as PNGs, and with svg as SVGs beside them."""
        self.blocks: list[tuple] = []
        self.figures_dir = figures_dir
        self.svg = svg
        self.painter = PAINTER

    def part(self) -> "Doc":
        """A piece of the document written ahead of its place, so that its figures start drawing sooner; `extend`
        puts it in its place."""
        return Doc(self.figures_dir, self.svg)

    def extend(self, part: "Doc"):
        self.blocks += part.blocks

    def h(self, level: int, text: str, anchor: str | None = None):
        """A heading; `anchor`: its id (else one from its text)."""
        self.blocks.append(("h", level, text, anchor or _anchor(text)))

    def toc(self):
        """The list of the level-2 headings, where it is put."""
        self.blocks.append(("toc",))

    def p(self, text: str):
        self.blocks.append(("p", text))

    def items(self, lines: list[str]):
        self.blocks.append(("ul", lines))

    def pre(self, text: str):
        self.blocks.append(("pre", text))

    def table(self, df: pd.DataFrame, ids: list[str] | None = None, classes: dict[str, list[str]] | None = None,
              fold: str | None = None, wide: tuple[str, ...] = ()):
        """A table. ids: each row's id in the page; classes: a column's cells' CSS classes, row by row (a verdict's
        colour); fold: the table folded under this line, for numbers a reader opens when they want them; wide: the
        columns of prose, given the room to wrap in."""
        self.blocks.append(("table", df.astype(str).replace({"nan": "-", "None": "-", "<NA>": "-"}),
                            {"ids": ids, "classes": classes or {}, "fold": fold, "wide": wide}))

    def raw(self, html_text: str, markdown: str):
        """A piece only the HTML page can show (an interactive view), and what the Markdown says in its place."""
        self.blocks.append(("raw", html_text, markdown))

    def figure(self, name: str, p: Plot, caption: str):
        path = self.figures_dir / f"{figure_file(name)}.png"
        self.painter.paint(p, path, self.svg)
        self.blocks.append(("img", path, caption))

    def markdown(self) -> str:
        self.painter.wait()
        out = []
        for kind, *a in self.blocks:
            if kind == "h":
                out.append(f"<a id=\"{a[2]}\"></a>\n\n{'#' * a[0]} {a[1]}" if a[2] != _anchor(a[1]) else
                           f"{'#' * a[0]} {a[1]}")
            elif kind == "toc":
                continue
            elif kind == "p":
                out.append(a[0])
            elif kind == "ul":
                out.append("\n".join(f"- {line}" for line in a[0]))
            elif kind == "pre":
                out.append("```\n" + a[0].replace("```", "'''") + "\n```")
            elif kind == "table":
                df = a[0]
                cell = lambda s: str(s).replace("|", "\\|").replace("\n", "<br>")  # noqa: E731
                out.append(("" if not a[1]["fold"] else f"{a[1]['fold']}:\n\n") + "\n".join([
                    "| " + " | ".join(map(cell, df.columns)) + " |", "|" + "---|" * len(df.columns),
                    *("| " + " | ".join(map(cell, row)) + " |" for row in df.values)]))
            elif kind == "raw":
                out.append(a[1])
            elif kind == "img":
                out.append(f"![{a[1]}]({a[0].parent.name}/{a[0].name})\n\n*{a[1]}*")
        return "\n\n".join(out) + "\n"

    def html(self, title: str) -> str:
        self.painter.wait()
        e, md = html.escape, inline
        body = []
        for kind, *a in self.blocks:
            if kind == "h":
                body.append(f"<h{a[0]} id='{e(a[2])}'>{md(a[1])}</h{a[0]}>")
            elif kind == "toc":
                body.append("<nav class='toc'><ul>" + "".join(
                    f"<li><a href='#{e(b[3])}'>{md(b[2])}</a></li>"
                    for b in self.blocks if b[0] == "h" and b[1] == 2) + "</ul></nav>")
            elif kind == "p":
                body.append(f"<p>{md(a[0])}</p>")
            elif kind == "ul":
                body.append("<ul>" + "".join(f"<li>{md(line)}</li>" for line in a[0]) + "</ul>")
            elif kind == "pre":
                body.append(f"<pre>{e(a[0])}</pre>")
            elif kind == "table":
                body.append(_table(*a))
            elif kind == "raw":
                body.append(a[0])
            elif kind == "img":
                data = base64.b64encode(a[0].read_bytes()).decode()
                body.append(f"<figure><img src='data:image/png;base64,{data}' alt='{e(a[1])}'>"
                            f"<figcaption>{md(a[1])}</figcaption></figure>")
        return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{e(title)}</title>
<style>
body {{ font: 15px/1.45 system-ui, sans-serif; max-width: {WIDTH - 40}px; margin: 0.8em auto; padding: 0 20px;
        color: #222; overflow-wrap: break-word; }}
h1 {{ font-size: 24px; margin: 0.2em 0; }} h2 {{ margin-top: 1.8em; border-bottom: 1px solid #ddd; }}
.tablebox {{ max-width: 100%; overflow-x: auto; margin: 0.6em 0; }}
table {{ border-collapse: collapse; font-size: 13px; }}
th, td {{ border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }}
th {{ background: #f3f3f3; }}
td.wide {{ min-width: 16em; max-width: 34em; }}
code {{ font-size: 92%; background: #f3f3f3; padding: 0 3px; border-radius: 3px; }}
img {{ max-width: 100%; height: auto; }} figure {{ margin: 1em 0 2em; }}
figcaption {{ color: #555; font-size: 13px; }}
pre {{ background: #f7f7f7; padding: 0.7em; white-space: pre-wrap; font-size: 13px; }}
details > summary {{ cursor: pointer; color: #335; margin: 0.4em 0; }}
nav.toc ul {{ list-style: none; padding: 0; margin: 0.5em 0; display: flex; flex-wrap: wrap; gap: 2px 14px;
              font-size: 13px; }}
{outcomes.css()}
</style></head>
<body>
{chr(10).join(body)}
</body></html>
"""


def inline(text: str) -> str:
    """Text as HTML, its Markdown marks rendered: `code`, **strong** and [a link](#within-the-page); everything else
    escaped."""
    out = []
    for k, part in enumerate(re.split(r"`([^`]+)`", str(text))):
        if k % 2:
            out.append(f"<code>{html.escape(part)}</code>")
            continue
        part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(part))
        out.append(re.sub(r"\[([^\]]+)\]\((#[\w-]+)\)", r"<a href='\2'>\1</a>", part))
    return "".join(out)


def _table(df: pd.DataFrame, how: dict) -> str:
    ids, classes, wide = how["ids"], how["classes"], set(how["wide"])
    head = "".join(f"<th>{inline(c)}</th>" for c in df.columns)
    rows = []
    for i, row in enumerate(df.values):
        cells = []
        for c, v in zip(df.columns, row):
            css = " ".join(filter(None, [classes[c][i] if c in classes else "", "wide" if c in wide else ""]))
            cells.append(f"<td class='{css}'>{inline(v)}</td>" if css else f"<td>{inline(v)}</td>")
        rid = f" id='{html.escape(ids[i])}'" if ids else ""
        rows.append(f"<tr{rid}>{''.join(cells)}</tr>")
    table = f"<div class='tablebox'><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    if how["fold"]:
        return f"<details><summary>{inline(how['fold'])}</summary>{table}</details>"
    return table


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")

