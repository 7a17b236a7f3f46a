"""The report's attention view in a real browser: a head clicked and a character hovered light up exactly the
weights the run stored for that head."""
import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from analysis import report
from tests.analysis.test_report import ROOT, browse, chromium

ACT = """<script>
window.addEventListener("load", () => {
  const view = document.getElementById("av");
  const until = (f) => new Promise(done => { const t = () => f() ? done() : setTimeout(t, 20); t(); });
  (async () => {
    await until(() => view.dataset.ready === "1");
    const run = document.getElementById("av-run");
    run.value = "RUN"; run.dispatchEvent(new Event("change"));
    await until(() => view.dataset.ready === "1");
    document.querySelector('#av-heads button[data-block="BLOCK"][data-head="HEAD"]').click();
    document.querySelector('#av-text span[data-i="QUERY"]').dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
    view.scrollIntoView();
    document.body.dataset.acted = "1";
  })();
});
</script>"""


@pytest.fixture(scope="module")
def page(quick_store, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    with contextlib.redirect_stdout(io.StringIO()):
        rc = report.main([f"tracking_uri=sqlite:///{quick_store}/mlflow.db", f"out={out}", "quick=true",
                          "ablations=[baseline,microgpt]", "log=false"])
    assert rc == 0
    return out / "report.html", MlflowClient(f"sqlite:///{quick_store}/mlflow.db")


def act(html: str, run: int, block: int, head: int, query: int) -> str:
    script = ACT.replace("RUN", str(run)).replace("BLOCK", str(block)).replace("HEAD", str(head))
    return html.replace("</body>", script.replace("QUERY", str(query)) + "</body>")


def test_clicking_a_head_and_hovering_a_character_shows_that_heads_stored_weights(page, tmp_path):
    exe = chromium()
    html_path, client = page
    html = html_path.read_text()
    data = json.loads(re.search(r"<script type='application/json' id='av-data'>(.*?)</script>", html, re.S)
                      .group(1).replace("<\\/", "</"))
    labels = [r["label"] for r in data["runs"]]
    assert any(label.startswith("baseline / base / seed") for label in labels), labels
    assert any(label.startswith("microgpt / microgpt / seed") for label in labels), labels
    i = next(k for k, label in enumerate(labels) if label.startswith("baseline / base"))
    block, head, query = 2, 3, 11
    marked = tmp_path / "acted.html"
    marked.write_text(act(html, i, block, head, query))
    dom = browse(exe, marked, tmp_path, "--dump-dom", "--virtual-time-budget=15000")
    assert 'data-acted="1"' in dom
    assert re.search(r'<button data-block="2" data-head="3" class="on">', dom)
    text = re.search(r'<div id="av-text" class="av-text">(.*?)</div>', dom, re.S).group(1)
    spans = re.findall(r"<span ([^>]*)>", text)
    shown = {int(re.search(r'data-i="(\d+)"', s).group(1)): float(re.search(r'data-w="([\d.]+)"', s).group(1))
             for s in spans if "data-w=" in s}
    assert 'class="av-q"' in next(s for s in spans if f'data-i="{query}"' in s)

    path = client.download_artifacts(data["runs"][i]["run_id"], "attention_lines.json", str(tmp_path))
    stored = json.loads(Path(path).read_text())["lines"][0]
    row = stored["weights"][block - 1][head - 1][query]
    assert sorted(shown) == list(range(query + 1))   # the character itself and every one before it, no later one
    for k, w in shown.items():
        assert w == pytest.approx(row[k], abs=0.5 / 255 + 0.0006), k   # a byte per weight, shown to 3 decimals
    other = stored["weights"][0][0][query]
    assert max(abs(a - b) for a, b in zip(row, other)) > 0.02   # the click mattered: another head reads elsewhere


def screenshot(exe: str, html: str, run: int, block: int, head: int, query: int, out: Path, tmp_path: Path):
    """The view alone (the report's other sections hidden), a head clicked and a character hovered."""
    hide = "<style>body > :not(#av):not(#explore-the-attention) { display: none; }</style>"
    page = tmp_path / "shot.html"
    page.write_text(act(html, run, block, head, query).replace("</body>", hide + "</body>"))
    browse(exe, page, tmp_path, "--virtual-time-budget=15000", "--window-size=1100,330", f"--screenshot={out}")
    assert out.read_bytes().startswith(b"\x89PNG")


def test_a_screenshot_of_the_view(page, tmp_path):
    shots = ROOT / "test-artifacts"   # for a person to look at, as the report's own screenshot
    shots.mkdir(exist_ok=True)
    screenshot(chromium(), page[0].read_text(), 0, 1, 1, 20, shots / "attention-view.png", tmp_path)


def test_the_view_is_self_contained(page):
    html = page[0].read_text()
    view = html[html.index("<div id='av'"):]
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", view)   # nothing fetched: no network, no CDN
    assert "DecompressionStream" in view
