"""A researcher's own ablation: an exercise file in a folder of their own, and a sweep that exists only in the store,
trained by the quick suite and reported with their own sections, figures and verdicts, without a code change."""
import re
import shutil
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from lm.commands import suite
from tests.analysis.test_report import CHECK, browse, chromium, drawn, make, uri

ROOT = Path(__file__).resolve().parents[2]
# A grid sweep as the command line records it: variants named after the grid point, a sweep figure.
GRID = """title: "Sweep: model.n_head"
lesson: "a grid sweep from the command line"
measures: val_loss per grid point
variants:
  n_head_1: [model.n_head=1]
  n_head_2: [model.n_head=2]
report: [{kind: sweep, metric: val_loss}]
"""


def readme_block(language: str, first_line: str) -> str:
    """The README's code block in `language` that starts with first_line: the example the test runs as shown."""
    blocks = re.findall(rf"```{language}\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return next(b for b in blocks if b.startswith(first_line))


@pytest.fixture(scope="module")
def own_store(tmp_path_factory):
    """The README's wider.yaml and a sweep, one seed at toy size, in a store of their own; the sweep's file then
    goes, and its parent run carries exercise.yaml, as a sweep's does."""
    folder = tmp_path_factory.mktemp("my-exercises")
    (folder / "wider.yaml").write_text(readme_block("yaml", "# experiments/wider.yaml"))
    (folder / "grid.yaml").write_text(GRID)
    root = tmp_path_factory.mktemp("own-store")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        mp.setenv("TINYGPT_STORE", str(root))
        mp.setenv("TINYGPT_EXPERIMENTS", str(folder))
        assert suite.main(["quick=true", "ablations=[wider,grid]"]) == 0
    client = MlflowClient(uri(root))
    exp = client.get_experiment_by_name("quick/grid")
    parent = client.search_runs([exp.experiment_id], "tags.role = 'exercise'")[0]
    client.log_text(parent.info.run_id, GRID, "exercise.yaml")
    client.rename_experiment(exp.experiment_id, "quick/sweep/grid")
    (folder / "grid.yaml").unlink()
    return root, folder


@pytest.fixture(scope="module")
def own_report(own_store, tmp_path_factory):
    root, folder = own_store
    out = tmp_path_factory.mktemp("own-report")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TINYGPT_EXPERIMENTS", str(folder))
        rc, _, stderr = make(root, out, "quick=true", "log=false")
    assert rc == 0, stderr
    return out


def test_a_new_exercise_file_gets_its_section_with_figures_and_a_verdict(own_report):
    md = (own_report / "report.md").read_text()
    section = md.split("## Wider models\n")[1].split("\n## ")[0]
    for kind in ("curves", "final", "sweep", "heads"):
        assert drawn(own_report / "figures" / f"wider_{kind}.png") > 100, kind
        assert f"figures/wider_{kind}.png" in section
    assert re.search(r"\| wide96 \| 96(\.0)? \| val_loss \| \d\.\d{3} \| 1 \| - \|", section)  # the sweep's table
    # The made-up claim is judged on the runs: one seed, so no interval and no verdict, the means' direction noted.
    row = re.search(r"\| wider \| A wider model ends lower after the same steps \| - \| ([\d.]+), ([\d.]+) \| "
                    r"(?:[^|]* \| ){5}indicative \(1 seed\) \| ([^|]*) \|", md)   # margin, method, seeds, p, p adj.
    assert row, md
    assert ("the means hold" in row[3]) == (float(row[1]) < float(row[2]))
    assert "| wider | quick/wider | Wider models | 2 of 2 | 2 | 1 | 0 |" in md


def test_a_sweep_that_only_the_store_holds_is_reported(own_report):
    md = (own_report / "report.md").read_text()
    assert "| sweep/grid | quick/sweep/grid | Sweep: model.n_head | 2 of 2 | 2 | 1 | 0 |" in md
    section = md.split("## Sweep: model.n_head\n")[1].split("\n## ")[0]
    assert "figures/sweep-grid_sweep.png" in section
    assert re.search(r"\| n_head_2 \| 2(\.0)? \| val_loss \| \d\.\d{3} \| 1 \| - \|", section)


def test_a_sweep_outside_the_quick_suite_is_found_by_its_experiment(own_store, tmp_path):
    root, folder = own_store
    shutil.copy(root / "mlflow.db", tmp_path / "mlflow.db")
    client = MlflowClient(uri(tmp_path))
    client.rename_experiment(client.get_experiment_by_name("quick/sweep/grid").experiment_id, "sweep/grid")
    rc, _, stderr = make(tmp_path, tmp_path / "out", "ablations=[sweep/grid]", "log=false")
    assert rc == 0, stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert "## Sweep: model.n_head" in md and (tmp_path / "out" / "figures" / "sweep-grid_sweep.png").exists()
    assert "## Wider models" not in md


@pytest.mark.parametrize("entry, message", [
    ("{kind: violin}", "report entry 1 has unknown kind 'violin'; the kinds are curves, final,"),
    ("{kind: curves, colour: red}", "report entry 1 has unknown field 'colour'; its fields are kind, metrics, "
                                    "metric, baselines, labels, title"),
    ("{kind: scaling, colour: red}", "report entry 1 has unknown field 'colour'; its fields are kind\n"),
])
def test_a_bad_report_entry_is_one_line_before_the_store_is_read(entry, message, tmp_path, monkeypatch):
    text = readme_block("yaml", "# experiments/wider.yaml").split("report:")[0] + f"report: [{entry}]\n"
    (tmp_path / "wider.yaml").write_text(text)
    monkeypatch.setenv("TINYGPT_EXPERIMENTS", str(tmp_path))
    rc, stdout, stderr = make(tmp_path / "no-store", tmp_path / "out")
    assert rc == 2 and stdout == "" and stderr.count("\n") == 1
    assert re.match(r"error: wider\.yaml:\d+: ", stderr) and message in stderr, stderr


def test_an_experiments_folder_that_is_not_there_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYGPT_EXPERIMENTS", str(tmp_path / "nowhere"))
    rc, _, stderr = make(tmp_path, tmp_path / "out")
    assert rc == 2
    assert stderr == f"error: TINYGPT_EXPERIMENTS={tmp_path / 'nowhere'} is not a folder of exercise files\n"
    assert suite.main(["quick=true"]) == 2


def test_both_open_in_a_browser(own_report, tmp_path):
    exe = chromium()
    html = own_report / "report.html"
    figures = len(list((own_report / "figures").glob("*.png")))
    # wider: curves, final, sweep, heads; the sweep: its sweep (nothing of either reads a knock-out, so a suite's run
    # does not measure one: lm/suite/measuring.py)
    assert figures == 5
    marked = tmp_path / "marked.html"
    marked.write_text(html.read_text().replace("</body>", CHECK + "</body>"))
    dom = browse(exe, marked, tmp_path, "--dump-dom", "--virtual-time-budget=10000")
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert f'data-images="{figures}"' in body and 'data-broken="0"' in body, body
    assert "Wider models" in dom and "Sweep: model.n_head" in dom
    assert re.search(r'<td class="v-indicative">', dom)
