"""A person's look at the report: reports/report.html in headless Chromium (Debian's, driven by Playwright) on a fresh
profile at 1600 × 1000, what the first screen shows measured, and screenshots for people to look at.

    python -m tests.analysis.report_browser [reports/report.html] [reports/screens]

prints what it measured as JSON and leaves the screenshots in the folder (reports/ is git-ignored).
"""
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.scaleout.helpers import ROOT, shared_browser

VIEWPORT = {"width": 1600, "height": 1000}
SCREENS = ROOT / "reports" / "screens"

MEASURE = """() => {
  const box = el => { if (!el) return null; const r = el.getBoundingClientRect();
                      return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const figures = [...document.querySelectorAll("figure img")].map(img => ({
    alt: img.alt.slice(0, 80), natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
    room: img.parentElement.clientWidth}));
  const text = document.body.innerText;
  return {
    viewport: {width: window.innerWidth, height: window.innerHeight},
    page: {width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight},
    grid: box(document.querySelector("table.grid")),
    counts: box([...document.querySelectorAll("#verdicts p.counts")].pop()),
    why: box(document.querySelector("#verdicts ul.why")),
    cells: document.querySelectorAll("#verdicts a.cell").length,
    cell_classes: [...document.querySelectorAll("#verdicts a.cell")]
      .map(a => [...a.classList].filter(c => c !== "cell").join(" ")),
    broken_links: [...document.querySelectorAll("#verdicts a.cell")]
      .filter(a => !document.getElementById(a.getAttribute("href").slice(1))).length,
    backticks: (text.match(/`/g) || []).length,
    markdown: (text.match(/\\*\\*|\\]\\(#/g) || []).length,
    figures: figures,
    broken_images: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).length,
    bytes: document.documentElement.outerHTML.length,
  };
}"""


@dataclass
class Seen:
    viewport: dict       # the window's inner size
    page: dict           # the whole page's scroll size
    grid: dict | None    # the verdict grid's box on the first screen
    counts: dict | None  # the last line of counts' box
    why: dict | None     # the list of claims not reproduced, if any
    cells: int           # the grid's cells
    cell_classes: list   # each cell's classes but `cell`: its outcome's (v-reproduced), and `ours` for ours
    broken_links: int    # cells whose claim row is not in the page
    backticks: int       # literal backticks in the text a person reads
    markdown: int        # other Markdown marks left as text (** and ](#)
    figures: list        # each figure: its drawn width, its shown width and the room it has
    broken_images: int   # images the browser could not decode
    bytes: int           # the page's HTML


def look(report: Path, screens: Path | None = None) -> Seen:
    """Opens the report as a person does, measures the first screen and the page, and saves screenshots: the first
    screen (report.png), a screen at the first exercise's section and the whole page."""
    context = shared_browser().new_context(viewport=VIEWPORT)   # a fresh profile: a new context
    try:
        page = context.new_page()
        page.goto(report.resolve().as_uri(), wait_until="load")
        page.wait_for_function("[...document.images].every(i => i.complete)", timeout=60_000)
        seen = Seen(**page.evaluate(MEASURE))
        if screens is not None:
            screens.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screens / "report.png"))   # the first screen
            first = page.locator("h2[id^='ex-']").first
            if first.count():
                first.scroll_into_view_if_needed()
                page.evaluate("document.querySelector(\"h2[id^='ex-']\").scrollIntoView()")
                page.screenshot(path=str(screens / "first-exercise.png"))
            page.screenshot(path=str(screens / "whole-page.png"), full_page=True)
    finally:
        context.close()
    return seen


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "reports" / "report.html"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else SCREENS
    print(json.dumps(asdict(look(path, out)), indent=1))
