"""The report puts each exercise's verdicts and figures on its parent run (issue 14)."""
from mlflow.tracking import MlflowClient

from analysis import claims
from tests.analysis.test_report import quick_report, uri  # noqa: F401  (the module's fixture)


def test_each_parent_run_gets_its_verdicts_and_figures(quick_report, quick_store):
    client = MlflowClient(uri(quick_store))
    exp = client.get_experiment_by_name("quick/heads")
    (parent,) = client.search_runs([exp.experiment_id], "tags.role = 'exercise'")
    tags = parent.data.tags
    verdict, text = tags["verdict.1"].split(": ", 1)
    assert verdict in claims.VERDICTS
    assert text == "Finding: four heads against one head of the same width, validation loss"
    assert tags["verdicts"].startswith("1 ")
    figures = {a.path for a in client.list_artifacts(parent.info.run_id, "figures")}
    assert figures == {f"figures/heads_{kind}.png" for kind in ("sweep", "attention", "heads", "knockout")}
    for p in figures:   # PNGs, which MLflow's artifact view previews
        assert open(client.download_artifacts(parent.info.run_id, p), "rb").read(8) == b"\x89PNG\r\n\x1a\n"
