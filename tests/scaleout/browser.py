"""A person's look at MLflow's UI as `make ui` serves it: each page in headless Chromium (Debian's, driven by
Playwright) on a fresh profile, as a new user opens it, and what they would see there checked."""
import json
import os
import re
from dataclasses import dataclass

import pytest

from lm.spec import exercises
from lm.tracking import views
from tests.scaleout.helpers import ARTIFACTS, ROOT, chromium

CARD = "[data-testid=experiment-view-compare-runs-card]"
# Where the pictures go: test-artifacts/ (git-ignored), or with TINYGPT_SCREENSHOTS=docs the README's, in docs/.
PICTURES = ROOT / "docs" if os.environ.get("TINYGPT_SCREENSHOTS") == "docs" else ARTIFACTS
GENAI = ("Start Demo", "Detect Issues", "Token Usage", "workflowType=genai", "/overview")


@dataclass
class Seen:
    url: str            # where the page ended up
    text: str           # what it shows, as the browser lays it out
    charts: list[str]   # the chart cards' titles, first to last
    assistant: bool     # the assistant panel is open


def look(url: str, ready: str, picture: str | None = None, click: str | None = None,
         storage: dict[str, str] | None = None) -> Seen:
    """Opens url in a fresh profile (no cookies, no local storage but `storage`), clicks the link named `click` if
    given, waits for the page (`ready`: a selector on it), and returns what is on the screen; saves it as
    PICTURES/picture."""
    exe = chromium()   # a one-line skip without it (a failure with TINYGPT_REQUIRE_BROWSER=1)
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu",
                                                               "--disable-dev-shm-usage", "--no-first-run"])
        try:
            page = browser.new_context(viewport={"width": 1500, "height": 1000}).new_page()
            for key, value in (storage or {}).items():
                page.add_init_script(f"localStorage.setItem({json.dumps(key)}, {json.dumps(value)})")
            page.goto(url)
            if click:
                page.get_by_role("link", name=click, exact=True).first.click(timeout=60_000)
            page.wait_for_selector(ready, timeout=60_000)
            # Then the charts draw, and the assistant opens itself if it does: MLflow's runs page polls for new
            # runs, so the network never goes quiet to say when.
            page.wait_for_timeout(3000)
            seen = Seen(page.url, page.inner_text("body"),
                        [c.split("\n")[0].strip() for c in page.locator(CARD).all_inner_texts()],
                        page.locator("textarea[placeholder^='Ask a question']").count() > 0
                        or "Ask questions about your experiments" in page.inner_text("body"))
            if picture:
                PICTURES.mkdir(exist_ok=True)
                page.screenshot(path=str(PICTURES / picture))
        finally:
            browser.close()
    return seen


def no_genai_and_no_assistant(seen: Seen) -> None:
    assert not seen.assistant, f"{seen.url}: the assistant panel is open"
    found = [g for g in GENAI if g in seen.text or g in seen.url]
    assert not found, f"{seen.url}: a GenAI page ({found})"
    assert "Unassigned" not in seen.text, f"{seen.url}: a chart or group of runs without a variant"


def printed_links(out: str) -> dict[str, list[str]]:
    """`make ui`'s links: {experiment: [its runs table, its charts]}; an experiment the suite did not make (the
    report's) has the first alone."""
    links: dict[str, list[str]] = {}
    for name, url in re.findall(r"^\s+(?:(\S+)\s+)?(http\S+)$", out, re.M):
        if name:
            links[name] = [url]
        else:
            links[list(links)[-1]].append(url)
    return links


def exercise(experiment: str) -> exercises.Exercise:
    return exercises.load_all()[experiment.removeprefix("quick/")]


def check_printed_links(out: str, names: list[str]) -> dict[str, tuple[Seen, Seen]]:
    """Each exercise's two links as a person sees them: the table with each variant's summary and the runs'
    training time; the charts led by the exercise's own, none of them MLflow's own single bars."""
    links = printed_links(out)
    assert set(names) <= set(links) and all(len(links[n]) == 2 for n in names), out
    seen = {}
    for name in names:
        table_link, charts_link = links[name]
        ex, short = exercise(name), name.removeprefix("quick/")
        table = look(table_link, ".ag-root", f"ui-table-{short}.png")
        no_genai_and_no_assistant(table)
        first = f"{next(iter(ex.variants))}/{views.charted(ex)['bars'][0]}"
        assert views.TABLE_NAME in table.text and first in table.text, f"{table_link}: no {first} column"
        assert re.search(r"\(\d seeds?\)", table.text), f"{table_link}: no variant's summary"
        if not ex.init_from:   # one that trains nothing has no training time
            assert views.TRAINING_TIME in table.text and "Duration" in table.text, f"{table_link}: no training time"
        charts = look(charts_link, CARD, f"ui-charts-{short}.png")
        no_genai_and_no_assistant(charts)
        expected = [*views.charted(ex)["lines"], *views.charted(ex)["bars"]]
        # the exercise's charts first, in its order (one with no value in any run is left out: hideEmptyCharts)
        assert charts.charts[:1] == expected[:1] and charts.charts == [c for c in expected if c in charts.charts], \
            f"{charts_link}: charts {charts.charts}, expected {expected}"
        assert f"{views.OTHERS}" in charts.text and "Group by: variant" in charts.text
        seen[name] = (table, charts)
    return seen


def check_home(base: str, names: list[str]) -> Seen:
    """The bare address: the experiments list in model-training mode, the descriptions as text."""
    home = look(base, f"text={names[0]}", "ui-home.png")
    no_genai_and_no_assistant(home)
    assert home.url.endswith("#/experiments"), home.url
    for name in names:
        assert name in home.text and exercise(name).title in home.text
    assert "**" not in home.text
    return home


def check_default_page(base: str, name: str) -> Seen:
    """An experiment clicked in that list, as a person would: its runs, not a GenAI overview."""
    page = look(base, ".ag-root", f"ui-default-{name.removeprefix('quick/')}.png", click=name)
    no_genai_and_no_assistant(page)
    assert re.search(r"#/experiments/\d+/runs", page.url), page.url
    assert "Runs" in page.text and name.removeprefix("quick/") in page.text   # the parent run, its seeds folded in it
    return page
