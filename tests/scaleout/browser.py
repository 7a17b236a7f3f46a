"""A person's look at MLflow's UI as `make ui` serves it: each page in headless Chromium (Debian's, driven by
Playwright) on a fresh profile at 1600 × 1000, as a new user opens it, and what they would see there checked: where
the page landed, each chart's title and place on the screen, the legend entries a person can see (MLflow clips a
legend to its card: issue 34 found ctx64 cut off), and how many bars a bar chart has."""
import json
import os
import re
from dataclasses import dataclass, field

from lm.spec import exercises
from lm.tracking import views
from tests.scaleout.helpers import ARTIFACTS, ROOT, shared_browser

CARD = "[data-testid=experiment-view-compare-runs-card]"
WIDTH, HEIGHT = 1600, 1000
# Where the pictures go: test-artifacts/ (git-ignored), or with TINYGPT_SCREENSHOTS=docs the README's, in docs/.
PICTURES = ROOT / "docs" if os.environ.get("TINYGPT_SCREENSHOTS") == "docs" else ARTIFACTS
SCREENS = ROOT / "reports" / "screens"   # ui-<exercise>.png: each landing as a click from the home page shows it
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
         scroll: bool = False) -> Seen:
    """Opens url in a fresh profile (no cookies, no local storage but `storage`) at 1600 × 1000, clicks the link named
    `click` if given, waits for the page (`ready`: a selector on it), saves the first screen as `picture` (a path, or
    a name in PICTURES), and returns what is on the screen: the chart cards whole on it, or with `scroll` every card,
    each scrolled into view in turn (MLflow draws a chart as it comes into view)."""
    context = shared_browser().new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page = context.new_page()
        for key, value in (storage or {}).items():
            page.add_init_script(f"localStorage.setItem({json.dumps(key)}, {json.dumps(value)})")
        page.goto(url)
        if click:
            page.get_by_role("link", name=click, exact=True).first.click(timeout=60_000)
        page.wait_for_selector(ready, timeout=90_000)
        # Then the charts draw, and the assistant opens itself if it does: MLflow's runs page polls for new
        # runs, so the network never goes quiet to say when.
        page.wait_for_timeout(4000)
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
        page.wait_for_timeout(1200)
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
                        screens: bool = False) -> dict[str, tuple[Seen, ...]]:
    """Each exercise's links as a person sees them: the table with each variant's summary and the runs' training
    time; each charts view led by the exercise's own charts (check_charts), the exercise's own on its first screen.
    logged: each experiment's metrics; screens: each view of variants charted apart saved in SCREENS too, as
    ui-<exercise>-apart.png."""
    links = printed_links(out)
    seen = {}
    for name in names:
        ex, short = exercise(name), name.removeprefix("quick/")
        panels = views.panels(ex)
        assert len(links.get(name, [])) == 1 + len(panels), f"{name}: {links.get(name)}\n{out[:5000]}"
        table_link, *chart_links = links[name]
        table = look(table_link, ".ag-root", f"ui-table-{short}.png")
        no_genai_and_no_assistant(table)
        first = f"{next(iter(ex.variants))}/{views.summarised(ex)[0]}"
        assert views.TABLE_NAME in table.text and first in table.text, f"{table_link}: no {first} column"
        assert re.search(r"\(\d seeds?\)", table.text), f"{table_link}: no variant's summary"
        if not ex.init_from:   # one that trains nothing has no training time
            assert views.TRAINING_TIME in table.text and "Duration" in table.text, f"{table_link}: no training time"
        charts = []
        for panel, link in zip(panels, chart_links):
            suffix = "-apart" if panel.apart else ""
            picture = f"ui-charts-{short}{suffix}.png"
            # the exercise's own view is its landing's, whose every card check_landing scrolls to and whose first screen
            # it saves: here its first screen alone
            charts.append(look(link, CARD, picture, scroll=panel.apart))
            check_charts(charts[-1], ex, panel, (logged or {}).get(name))
            if screens and panel.apart:
                SCREENS.mkdir(parents=True, exist_ok=True)
                (SCREENS / f"ui-{short}{suffix}.png").write_bytes((PICTURES / picture).read_bytes())
        seen[name] = (table, *charts)
    return seen


def check_home(base: str, names: list[str]) -> Seen:
    """The bare address: the experiments list in model-training mode, the descriptions as text; the sidebar's Home
    leads there too, not to MLflow's welcome page."""
    home = look(base, f"text={names[0]}", "ui-home.png")
    no_genai_and_no_assistant(home)
    assert home.url.endswith("#/experiments"), home.url
    for name in names:
        assert name in home.text and exercise(name).title in home.text
    assert "**" not in home.text
    again = look(base, f"text={names[0]}", click="Home")
    assert again.url.endswith("#/experiments") and names[0] in again.text, again.url
    return home


def check_landing(base: str, name: str, logged: set[str] | None = None) -> Seen:
    """An experiment clicked in that list, as a person would: it opens on its charts view, as `make ui` prints it
    (check_charts); its first screen is saved as SCREENS/ui-<exercise>.png."""
    ex = exercise(name)
    page = look(base, CARD, SCREENS / f"ui-{name.removeprefix('quick/')}.png", click=name, scroll=True)
    check_charts(page, ex, views.panels(ex)[0], logged)
    assert re.search(r"#/experiments/\d+/runs", page.url), page.url
    return page
