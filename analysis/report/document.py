"""The report as a document: written once, rendered as Markdown and as self-contained HTML."""
import base64
import html
import re
from pathlib import Path

import pandas as pd

from analysis.report.painter import PAINTER, Plot


def figure_file(name: str) -> str:
    """A figure's file name (no extension): anything but letters, digits, _ and - becomes a dash, so that a sweep's
    name (`sweep/n_head-n_layer`) stays one file in the figures folder."""
    return re.sub(r"[^\w-]+", "-", name)


class Doc:
    def __init__(self, figures_dir: Path):
        self.blocks: list[tuple] = []
        self.figures_dir = figures_dir
        self.painter = PAINTER

    def part(self) -> "Doc":
        """A piece of the document written ahead of its place, so that its figures start drawing sooner; `extend`
        puts it in its place."""
        return Doc(self.figures_dir)

    def extend(self, part: "Doc"):
        self.blocks += part.blocks

    def h(self, level: int, text: str):
        self.blocks.append(("h", level, text))

    def p(self, text: str):
        self.blocks.append(("p", text))

    def items(self, lines: list[str]):
        self.blocks.append(("ul", lines))

    def pre(self, text: str):
        self.blocks.append(("pre", text))

    def table(self, df: pd.DataFrame):
        self.blocks.append(("table", df.astype(str).replace({"nan": "-", "None": "-", "<NA>": "-"})))

    def raw(self, html_text: str, markdown: str):
        """A piece only the HTML page can show (an interactive view), and what the Markdown says in its place."""
        self.blocks.append(("raw", html_text, markdown))

    def figure(self, name: str, p: Plot, caption: str):
        path = self.figures_dir / f"{figure_file(name)}.png"
        self.painter.paint(p, path)
        self.blocks.append(("img", path, caption))

    def markdown(self) -> str:
        self.painter.wait()
        out = []
        for kind, *a in self.blocks:
            if kind == "h":
                out.append(f"{'#' * a[0]} {a[1]}")
            elif kind == "p":
                out.append(a[0])
            elif kind == "ul":
                out.append("\n".join(f"- {line}" for line in a[0]))
            elif kind == "pre":
                out.append("```\n" + a[0].replace("```", "'''") + "\n```")
            elif kind == "table":
                df = a[0]
                cell = lambda s: str(s).replace("|", "\\|").replace("\n", "<br>")  # noqa: E731
                out.append("\n".join(["| " + " | ".join(map(cell, df.columns)) + " |",
                                      "|" + "---|" * len(df.columns),
                                      *("| " + " | ".join(map(cell, row)) + " |" for row in df.values)]))
            elif kind == "raw":
                out.append(a[1])
            elif kind == "img":
                out.append(f"![{a[1]}]({a[0].parent.name}/{a[0].name})\n\n*{a[1]}*")
        return "\n\n".join(out) + "\n"

    def html(self, title: str) -> str:
        self.painter.wait()
        e = html.escape
        body = []
        for kind, *a in self.blocks:
            if kind == "h":
                body.append(f"<h{a[0]} id='{_anchor(a[1])}'>{e(a[1])}</h{a[0]}>")
            elif kind == "p":
                body.append(f"<p>{e(a[0])}</p>")
            elif kind == "ul":
                body.append("<ul>" + "".join(f"<li>{e(line)}</li>" for line in a[0]) + "</ul>")
            elif kind == "pre":
                body.append(f"<pre>{e(a[0])}</pre>")
            elif kind == "table":
                df = a[0]
                head = "".join(f"<th>{e(str(c))}</th>" for c in df.columns)
                rows = "".join("<tr>" + "".join(
                    f"<td class='{_verdict_class(v) if c == 'verdict' else ''}'>{e(str(v))}</td>"
                    for c, v in zip(df.columns, row)) + "</tr>" for row in df.values)
                body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
            elif kind == "raw":
                body.append(a[0])
            elif kind == "img":
                data = base64.b64encode(a[0].read_bytes()).decode()
                body.append(f"<figure><img src='data:image/png;base64,{data}' alt='{e(a[1])}'>"
                            f"<figcaption>{e(a[1])}</figcaption></figure>")
        toc = "".join(f"<li><a href='#{_anchor(a[1])}'>{e(a[1])}</a></li>"
                      for kind, *a in self.blocks if kind == "h" and a[0] == 2)
        return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>
<style>
body {{ font: 15px/1.5 system-ui, sans-serif; max-width: 1400px; margin: 2em auto; padding: 0 1em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 13px; }}
th, td {{ border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f3f3f3; }}
td.reproduced {{ background: #dff3df; }} td.not-reproduced {{ background: #f8dcdc; }}
td.not-run {{ background: #eee; color: #666; }} td.within-seed-noise {{ background: #fbf0d0; }}
td.finding {{ background: #dde8f8; }} td.indicative {{ background: #f3f3f3; }}
img {{ max-width: 100%; }} figure {{ margin: 1em 0 2em; }} figcaption {{ color: #555; font-size: 13px; }}
pre {{ background: #f7f7f7; padding: 0.7em; white-space: pre-wrap; font-size: 13px; }}
</style></head>
<body>
{body[0] if body else ""}
<nav><ul>{toc}</ul></nav>
{chr(10).join(body[1:])}
</body></html>
"""


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _verdict_class(v: str) -> str:
    """The verdict's kind as a CSS class: 'indicative (1 seed)' is indicative, 'finding: ...' a finding."""
    return str(v).split(" (")[0].split(":")[0].replace(" ", "-")
