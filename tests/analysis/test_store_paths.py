"""No path of this machine in a written page: the report, docs/results.md and `make bench`'s report row name their
store by its path from the checkout, or by its folder and kind (lm.tracking.store_check.shown)."""

from analysis.report import frame
from lm.tools import bench_process
from lm.tracking.store_check import CHECKOUT, shown


def test_a_store_is_named_from_the_checkout_or_by_its_folder_and_kind(tmp_path):
    assert shown(f"sqlite:///{CHECKOUT}/mlruns/mlflow.db") == "mlruns/mlflow.db"
    assert shown(f"sqlite:///{tmp_path}/study/mlruns/mlflow.db") == "mlruns/mlflow.db (SQLite, outside the checkout)"
    assert shown(f"sqlite:///{tmp_path}/study/mlruns/mlflow.db", root=tmp_path) == "study/mlruns/mlflow.db"
    # a server is named by its address, its password hidden as everywhere
    assert shown("http://ana:secret@tracking.example:5000") == "http://ana:***@tracking.example:5000"


def test_the_report_and_the_results_page_name_no_path_of_this_machine(nopos002_stores, tmp_path):
    a, _ = nopos002_stores
    out = tmp_path / "report"
    assert frame.main([f"tracking_uri=sqlite:///{a}/mlflow.db", "quick=true", "ablations=nopos002", f"out={out}",
                       f"docs={out / 'docs'}", "log=false"]) == 0
    for page in ("report.md", "report.html", "docs/results.md"):
        text = (out / page).read_text()
        assert str(a) not in text and str(tmp_path) not in text, page
        assert "a/mlflow.db (SQLite, outside the checkout)" in text, page
    results = (out / "docs" / "results.md").read_text()
    assert "- **Store**: a/mlflow.db (SQLite, outside the checkout), 2 finished runs of 1 exercises." in results


class Sections:
    def __init__(self):
        self.sections, self.rows = [], []

    def section(self, title):
        self.sections.append(title)

    def add(self, *row):
        self.rows.append(row)


def test_make_bench_s_report_row_names_no_path_of_this_machine(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "mlruns"))   # no store there: the row says so
    table = Sections()
    bench_process.report(table, str(tmp_path), 1, quick=True)
    (title,) = table.sections
    assert title.startswith("`make report` on mlruns/mlflow.db (SQLite, outside the checkout), the quick suite's runs")
    assert str(tmp_path) not in title and table.rows[0][:2] == ("python -m analysis.report", "no runs")
