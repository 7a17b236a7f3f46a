"""The report puts each exercise's verdicts and figures on its parent run (issue 14): the report's own, as the notebook reads
them (issue 23)."""
import re

from mlflow.tracking import MlflowClient

from analysis.verdicts import claims
from tests.analysis.test_report import quick_report, uri  # noqa: F401  (the module's fixture)


def claims_table(md: str) -> list[dict[str, str]]:
    """The rows of the report's claims table, by column name."""
    section = md.split("## The lessons' claims\n")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    cells = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]
    return [dict(zip(cells[0], row)) for row in cells[1:]]


def test_each_parent_run_gets_its_verdicts_and_figures(quick_report, quick_store):
    client = MlflowClient(uri(quick_store))
    exp = client.get_experiment_by_name("quick/heads")
    (parent,) = client.search_runs([exp.experiment_id], "tags.role = 'exercise'")
    tags = parent.data.tags
    assert tags["verdict.1"].split(":")[0].split(" (")[0] in claims.VERDICTS
    assert tags["verdict.1"].endswith(": Finding: four heads against one head of the same width, validation loss")
    assert tags["verdicts"].startswith("1 ")
    figures = {a.path for a in client.list_artifacts(parent.info.run_id, "figures")}
    assert figures == {f"figures/heads_{kind}.png" for kind in ("sweep", "attention", "heads", "knockout")}
    for p in figures:   # PNGs, which MLflow's artifact view previews
        assert open(client.download_artifacts(parent.info.run_id, p), "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_every_parent_run_tag_is_the_reports_verdict(quick_report, quick_store):
    """Issue 23, defect 1: the tags were judged a second time, on the wrong lookup, and all read `not run`."""
    rows = claims_table((quick_report[0] / "report.md").read_text())
    client = MlflowClient(uri(quick_store))
    compared = 0
    for exercise in dict.fromkeys(r["exercise"] for r in rows):
        exp = client.get_experiment_by_name(f"quick/{exercise}")
        (parent,) = client.search_runs([exp.experiment_id], "tags.role = 'exercise'")
        mine = [r for r in rows if r["exercise"] == exercise]
        for i, r in enumerate(mine, 1):
            verdict = "" if r["verdict"] == "-" else r["verdict"]
            assert parent.data.tags[f"verdict.{i}"] == f"{verdict}: {r['claim']}", (exercise, i)
            compared += 1
    assert compared == len(rows) >= 40
    assert any(r["verdict"] != "not run" for r in rows)


def test_the_notebook_reads_the_reports_verdicts(quick_report, quick_store):
    from analysis import runs

    rows = claims_table((quick_report[0] / "report.md").read_text())
    df = runs.verdicts(quick=True, tracking_uri=uri(quick_store))
    assert df["verdict"].tolist() == [r["verdict"] for r in rows]
    assert df["p (adjusted)"].tolist() == [r["p (adjusted)"] for r in rows]
