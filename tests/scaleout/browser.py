"""A person's look at MLflow's UI as `make ui` serves it: each page in headless Chromium (Debian's, driven by
Playwright) on a fresh profile at 1600 × 1000, as a new user opens it, and what they would see there checked: where
the page landed, each chart's title and place on the screen, the legend entries a person can see (MLflow clips a
legend to its card: issue 34 found ctx64 cut off), and how many bars a bar chart has."""
import itertools
import json
import os
import re
from dataclasses import dataclass, field

from lm.settings import exercises
from lm.tracking import views
from tests.scaleout.helpers import ARTIFACTS, ROOT, shared_browser

CARD = "[data-testid=experiment-view-compare-runs-card]"
WIDTH, HEIGHT = 1600, 1000
# Where the pictures go: test-artifacts/ (git-ignored), or with TINYGPT_SCREENSHOTS=docs the README's, in docs/.
PICTURES = ROOT / "docs" if os.environ.get("TINYGPT_SCREENSHOTS") == "docs" else ARTIFACTS
SCREENS = ROOT / "reports" / "screens"   # ui-<exercise>.png: each landing as a click from the home page shows it
# How long a look stays on a page once its `ready` selector is there: LINGER ms, time for the assistant to open itself
# if it does (check_home's first look, and test_ui_runs' look that sees it open); or, with `drawn`, until the page has
# been drawn and still for SETTLE ms (DRAWN_JS), and so after each wheel step. On the quick store (load ~3 on 2 cores),
# nothing DRAWN_JS watches changed in the 5 s after it first held on any of the 47 tables, charts views and landings,
# and in the 2 s after any of the landings' 37 wheel steps but 0.10-0.19 s on (the cards that left the screen taken
# out); each charts view and landing showed the same cards, legends, bars and text as after the fixed 4000 ms and
# 1200 ms a step of before (each table the same lines, in an order AG Grid varies from one look to the next), 3-5 s
# sooner. The assistant, where it opens, does so 0.02 s after the selector. A wheel step that has not moved the charts
# pane in WHEEL ms is taken as its end, as the fixed wait of that length took it.
LINGER, SETTLE, WHEEL, DRAWN_TIMEOUT = 4000, 500, 1200, 60_000
GENAI = ("Start Demo", "Detect Issues", "Token Usage", "workflowType=genai", "/overview")
# Each chart card as the screen shows it: its title, where it sits, its legend's entries (those inside every box that
# clips them, and all), and its bars. A legend entry is a swatch (an svg) and its text, outside the plot.
CARDS_JS = """cards => cards.map(card => {
  let pane = card.parentElement;   // the box that scrolls the charts
  while (pane && !(pane.scrollHeight > pane.clientHeight && getComputedStyle(pane).overflowY !== 'visible'))
    pane = pane.parentElement;
  const view = pane ? pane.getBoundingClientRect() : {top: 0, bottom: window.innerHeight};
  const offset = pane ? pane.scrollTop : window.scrollY;
  const box = card.getBoundingClientRect();
  const plot = card.querySelector('.js-plotly-plot');
  const entries = [...card.querySelectorAll('span')].filter(s => s.previousElementSibling
      && s.previousElementSibling.tagName.toLowerCase() === 'svg' && !(plot && plot.contains(s)));
  const inside = e => {
    const b = e.getBoundingClientRect();
    if (!b.width || !b.height) return false;
    for (let a = e.parentElement; a && a !== card.parentElement; a = a.parentElement) {
      const st = getComputedStyle(a);
      if (st.overflowX === 'visible' && st.overflowY === 'visible' && a !== card) continue;
      const c = a.getBoundingClientRect();
      if (b.top < c.top - 1 || b.bottom > c.bottom + 1 || b.left < c.left - 1 || b.right > c.right + 1) return false;
    }
    return true;
  };
  return {title: card.innerText.split('\\n')[0].trim(), top: box.top + offset, bottom: box.bottom + offset,
          left: box.left, whole: box.top >= view.top - 1 && box.bottom <= Math.min(view.bottom, window.innerHeight) + 1,
          legend: entries.map(s => s.innerText.trim()), shown: entries.filter(inside).map(s => s.innerText.trim()),
          bars: card.querySelectorAll('.barlayer .point').length};
})"""

OFFSET_JS = """card => { let pane = card.parentElement;
  while (pane && !(pane.scrollHeight > pane.clientHeight && getComputedStyle(pane).overflowY !== 'visible'))
    pane = pane.parentElement;
  return pane ? pane.scrollTop : window.scrollY; }"""
# The page drawn and still: every place for a chart on the screen holding its card (MLflow puts a card in 150 ms after
# its place comes into view, and takes it out as long after it leaves), each card with its plot's traces and its
# legend (a card comes before its plot), the table's rows if it has one; and then nothing on the screen changed (its
# text, where the cards lie, how much each plot holds, the charts pane's offset) for `settle` ms. After a wheel step
# (`before`: the offset it left), the pane has moved too, or stands at its end, or has had `wheel` ms to. Polled, its
# state kept in window.
DRAWN_JS = """([cardSelector, token, settle, before, wheel]) => {
  const now = performance.now();
  let s = window.__tinygptDrawn;
  if (!s || s.token !== token) s = window.__tinygptDrawn = {token, start: now, since: now, sig: null};
  const cards = [...document.querySelectorAll(cardSelector)];
  let pane = cards.length ? cards[0].parentElement : null;
  while (pane && !(pane.scrollHeight > pane.clientHeight && getComputedStyle(pane).overflowY !== 'visible'))
    pane = pane.parentElement;
  const view = pane ? pane.getBoundingClientRect() : {top: 0, bottom: window.innerHeight};
  const bottom = Math.min(view.bottom, window.innerHeight);
  const offset = pane ? pane.scrollTop : window.scrollY;
  const atEnd = pane ? pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 1
                     : window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1;
  const onScreen = e => { const b = e.getBoundingClientRect();
                          return b.height > 0 && b.bottom > view.top && b.top < bottom; };
  const shown = cards.filter(onScreen);
  const empty = [...document.querySelectorAll('[data-testid=draggable-chart-cards-grid] > *')]
      .filter(cell => onScreen(cell) && !cell.querySelector(cardSelector));
  const drawn = c => { const plot = c.querySelector('.js-plotly-plot');
    return plot && plot.querySelector('.main-svg') && plot.querySelectorAll('.trace').length > 0
      && [...c.querySelectorAll('span')].some(s => s.previousElementSibling
           && s.previousElementSibling.tagName.toLowerCase() === 'svg' && !plot.contains(s)); };
  const grid = document.querySelector('.ag-root');
  const ready = !empty.length && shown.every(drawn) && (!grid || grid.querySelector('.ag-row') !== null)
      && (before === null || offset !== before || atEnd || now - s.start >= wheel);
  const sig = JSON.stringify([ready, offset, document.body.innerText, shown.map(c =>
      [Math.round(c.getBoundingClientRect().top), c.querySelectorAll('.trace, .point').length])]);
  if (sig !== s.sig || !ready) { s.sig = sig; s.since = now; }
  return ready && now - s.since >= settle;
}"""


@dataclass
class Card:
    title: str
    top: float              # px from the top of the first screen (below it: further down the page)
    bottom: float
    legend: list[str]       # every entry of its legend
    shown: list[str]        # the entries a person sees: inside the card and every box that clips them
    bars: int               # bars drawn (0: not a bar chart)

    @property
    def groups(self) -> set[str]:
        """The variants its visible legend names: "ctx16 (val_loss_at_position)" names ctx16."""
        return {e.split(" (")[0] for e in self.shown}


@dataclass
class Seen:
    url: str            # where the page ended up
    text: str           # what it shows, as the browser lays it out
    cards: list[Card]   # the chart cards, first to last, each looked at where it lies (scrolled into view)
    assistant: bool     # the assistant panel is open
    scrolled: bool      # cards holds every card of the page, not only those whole on its first screen
    charts: list[str] = field(default_factory=list)   # the cards' titles

    def __post_init__(self):
        self.charts = [c.title for c in self.cards]


def look(url: str, ready: str, picture=None, click: str | None = None, storage: dict[str, str] | None = None,
         scroll: bool = False, drawn: bool = False) -> Seen:
    """Opens url in a fresh profile (no cookies, no local storage but `storage`) at 1600 × 1000, clicks the link named
    `click` if given, waits for the page (`ready`: a selector on it), saves the first screen as `picture` (a path, or
    a name in PICTURES), and returns what is on the screen: the chart cards whole on it, or with `scroll` every card,
    each scrolled into view in turn (MLflow draws a chart as it comes into view). It lingers LINGER ms on the page,
    time for the assistant to open itself; with `drawn` it waits instead only until the page is drawn and still."""
    context = shared_browser().new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page = context.new_page()
        for key, value in (storage or {}).items():
            page.add_init_script(f"localStorage.setItem({json.dumps(key)}, {json.dumps(value)})")
        page.goto(url)
        if click:
            page.get_by_role("link", name=click, exact=True).first.click(timeout=60_000)
        page.wait_for_selector(ready, timeout=90_000)
        if drawn:
            settled(page, SETTLE)
        else:
            # Then the charts draw, and the assistant opens itself if it does: MLflow's runs page polls for new
            # runs, so the network never goes quiet to say when.
            page.wait_for_timeout(LINGER)
        if picture:
            path = picture if not isinstance(picture, str) else PICTURES / picture
            path.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(path))
        text = page.inner_text("body")
        assistant = page.locator("textarea[placeholder^='Ask a question']").count() > 0 \
            or "Ask questions about your experiments" in text
        found = every_card(page) if scroll else \
            [card(c) for c in page.locator(CARD).evaluate_all(CARDS_JS) if c["whole"]]
        seen = Seen(page.url, text, found, assistant, scroll)
    finally:
        context.close()
    return seen


_waits = itertools.count()   # each wait's own token: DRAWN_JS starts its count afresh at a new one


def settled(page, settle: int, before: float | None = None) -> None:
    """Waits until the page is drawn and has stood still for `settle` ms (DRAWN_JS); after a wheel step (`before`: the
    charts pane's offset before it), until the pane has moved too, or could not. A page that never does is left to
    the checks after it: they say what is wrong with it, the wait only spares them a half-drawn one."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(DRAWN_JS, arg=[CARD, next(_waits), settle, before, WHEEL], polling=100,
                               timeout=DRAWN_TIMEOUT)
    except PlaywrightTimeout:
        pass


def every_card(page) -> list[Card]:
    """Every chart card of the page, first to last, each as it looked when the whole of it was on the screen: MLflow
    keeps only the cards on the screen in the page, so the charts pane is scrolled down a quarter screen at a time."""
    found: dict[tuple[int, int], dict] = {}
    page.mouse.move(WIDTH * 0.6, HEIGHT * 0.7)   # over the charts
    before = None
    for _ in range(60):
        for c in page.locator(CARD).evaluate_all(CARDS_JS):
            key = (round(c["top"]), round(c["left"]))
            if key not in found or (c["whole"] and not found[key]["whole"]):
                found[key] = c
        offset = page.locator(CARD).first.evaluate(OFFSET_JS) if page.locator(CARD).count() else None
        if offset == before:
            break
        before = offset
        page.mouse.wheel(0, HEIGHT // 4)
        settled(page, SETTLE, before)
    return [card(found[key]) for key in sorted(found)]


def card(drawn: dict) -> Card:
    """A card of CARDS_JS's."""
    return Card(**{k: v for k, v in drawn.items() if k not in ("left", "whole")})


def no_genai_and_no_assistant(seen: Seen) -> None:
    assert not seen.assistant, f"{seen.url}: the assistant panel is open"
    found = [g for g in GENAI if g in seen.text or g in seen.url]
    assert not found, f"{seen.url}: a GenAI page ({found})"
    assert "Unassigned" not in seen.text, f"{seen.url}: a chart or group of runs without a variant"


def printed_links(out: str) -> dict[str, list[str]]:
    """`make ui`'s links: {experiment: [its runs table, its charts, and its variants charted apart if any]}; an
    experiment the suite did not make (the report's) has the first alone."""
    links: dict[str, list[str]] = {}
    for name, url in re.findall(r"^[ \t]+(?:(\S+)[ \t]+)?(http\S+)$", out, re.M):
        if name:
            links[name] = [url]
        else:
            links[list(links)[-1]].append(url)
    return links


def exercise(experiment: str) -> exercises.Exercise:
    return exercises.load_all()[experiment.removeprefix("quick/")]


def expected_titles(ex: exercises.Exercise, panel, logged: set[str] | None = None) -> list[str]:
    """The panel's chart titles as MLflow writes them, first to last; logged: the metrics its runs have (a line
    against a metric they lack is drawn over steps)."""
    panel = views.drawable(panel, logged) if logged is not None else panel
    return [views.title(ex, panel, c) for c in panel.charts]


def check_charts(seen: Seen, ex: exercises.Exercise, panel, logged: set[str] | None = None) -> None:
    """A charts view as the exercise's comparison: its charts in its order, the first of them on the first screen;
    every legend showing every variant of the panel; no bar chart of one bar."""
    where = seen.url
    assert f"viewStateShareKey={views.key_of(panel)}" in where and "compareRunsMode=CHART" in where, where
    no_genai_and_no_assistant(seen)
    expected = expected_titles(ex, panel, logged)
    # one with no value in any run is left out (hideEmptyCharts); after the exercise's own charts, MLflow may show one
    # for a metric a run logged after the view was drawn (seen once in CI, a microgpt knock-out of the bigger
    # variant's second block): those are not the comparison, and not checked
    ours = [t for t in expected if t in seen.charts]
    if not seen.scrolled:   # the first screen alone: as many of them as it holds
        ours = ours[:len(seen.charts)]
    assert seen.charts[:1] == expected[:1] and seen.charts[:len(ours)] == ours, \
        f"{where}: charts {seen.charts}, expected {expected}"
    assert len(ours) >= min(len(expected), 2), f"{where}: charts {seen.charts}, expected {expected}"
    first_screen = [c.title for c in seen.cards[:4] if (c.top + c.bottom) / 2 < HEIGHT]
    assert first_screen == seen.charts[:4], f"{where}: on the first screen only {first_screen} of {seen.charts}"
    for card in seen.cards[:len(ours)]:
        assert card.groups == set(panel.variants), \
            f"{where}: {card.title}'s legend shows {card.shown} of {card.legend}, not every one of {panel.variants}"
        assert card.bars != 1, f"{where}: {card.title} is a single bar"
    assert views.OTHERS in seen.text and "Group by: variant" in seen.text


def check_printed_links(out: str, names: list[str], logged: dict[str, set[str]] | None = None,
                        screens: bool = False, own: bool = True) -> dict[str, tuple[Seen, ...]]:
    """Each exercise's links as a person sees them: the table with each variant's summary and the runs' training
    time; each charts view led by the exercise's own charts (check_charts), the exercise's own on its first screen.
    logged: each experiment's metrics; screens: each view of variants charted apart saved in SCREENS too, as
    ui-<exercise>-apart.png; own: the exercise's own charts view looked at too, which a caller whose landings were
    checked at that very address (check_landing's printed) has seen already, every card of it."""
    links = printed_links(out)
    seen = {}
    # One look after another: a look's time is MLflow's scripts on the CPU, not waiting; 4 charts views opened at once
    # took 31.3 and 28.5 s against 29.4 and 27.9 s one after another (2 cores, load ~4).
    for name in names:
        ex, short = exercise(name), name.removeprefix("quick/")
        panels = views.panels(ex)
        assert len(links.get(name, [])) == 1 + len(panels), f"{name}: {links.get(name)}\n{out[:5000]}"
        table_link, *chart_links = links[name]
        table = look(table_link, ".ag-root", f"ui-table-{short}.png", drawn=True)
        no_genai_and_no_assistant(table)
        first = f"{next(iter(ex.variants))}/{views.summarised(ex)[0]}"
        assert views.TABLE_NAME in table.text and first in table.text, f"{table_link}: no {first} column"
        assert re.search(r"\(\d seeds?\)", table.text), f"{table_link}: no variant's summary"
        if not ex.init_from:   # one that trains nothing has no training time
            assert views.TRAINING_TIME in table.text and "Duration" in table.text, f"{table_link}: no training time"
        charts = []
        for panel, link in zip(panels, chart_links):
            if not (own or panel.apart):
                continue
            suffix = "-apart" if panel.apart else ""
            picture = f"ui-charts-{short}{suffix}.png"
            # the exercise's own view is its landing's, whose every card check_landing scrolls to and whose first screen
            # it saves: here its first screen alone
            charts.append(look(link, CARD, picture, scroll=panel.apart, drawn=True))
            check_charts(charts[-1], ex, panel, (logged or {}).get(name))
            if screens and panel.apart:
                SCREENS.mkdir(parents=True, exist_ok=True)
                (SCREENS / f"ui-{short}{suffix}.png").write_bytes((PICTURES / picture).read_bytes())
        seen[name] = (table, *charts)
    return seen


def check_home(base: str, names: list[str]) -> Seen:
    """The bare address: the experiments list in model-training mode, the descriptions as text; the sidebar's Home
    leads there too, not to MLflow's welcome page. Its first look lingers (LINGER): the assistant does not open itself
    later either, where every other look leaves once the page is drawn."""
    home = look(base, f"text={names[0]}", "ui-home.png")
    no_genai_and_no_assistant(home)
    assert home.url.endswith("#/experiments"), home.url
    for name in names:
        assert name in home.text and exercise(name).title in home.text
    assert "**" not in home.text
    again = look(base, f"text={names[0]}", click="Home", drawn=True)
    assert again.url.endswith("#/experiments") and names[0] in again.text, again.url
    return home


def check_landing(base: str, name: str, logged: set[str] | None = None, printed: str | None = None) -> Seen:
    """An experiment clicked in that list, as a person would: it opens on its charts view, as `make ui` prints it
    (check_charts), at printed, the address `make ui` printed for that view, where one is given; its first screen is
    saved as SCREENS/ui-<exercise>.png, and as the picture of that view, PICTURES/ui-charts-<exercise>.png."""
    ex, short = exercise(name), name.removeprefix("quick/")
    page = look(base, CARD, SCREENS / f"ui-{short}.png", click=name, scroll=True, drawn=True)
    PICTURES.mkdir(parents=True, exist_ok=True)
    (PICTURES / f"ui-charts-{short}.png").write_bytes((SCREENS / f"ui-{short}.png").read_bytes())
    check_charts(page, ex, views.panels(ex)[0], logged)
    assert re.search(r"#/experiments/\d+/runs", page.url), page.url
    # MLflow writes the view's state after the address it was opened at: "...&viewStateShareKey=...&searchFilter=..."
    assert printed is None or page.url.split("&searchFilter=")[0] == printed, (page.url, printed)
    return page
