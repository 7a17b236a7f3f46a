"""More than one page of finished runs in one experiment: the suite trains none again and makes no second parent;
the aggregates, knock-out's discovery and the report's listing see every run. The stores are built as the suite
lays out its runs (lm/tools/scale_store.py: the suite's plan and find_runs, then MLflow's own tables)."""
from collections import Counter

from mlflow.tracking import MlflowClient

from analysis.store_reading.reader import Reader
from lm.suite import ExitStatus, SuiteSpec, run
from lm.suite.jobs import Job
from lm.tools import scale_store
from lm.tracking import store as tracking
from lm.tracking.store import every_run, finished_runs

RUNS = 10_002  # past one page (lm.tracking.PAGE), and past the 10,000 newest runs that one search_runs gave


def experiment_runs(uri: str) -> list:
    client = MlflowClient(uri)
    return every_run(client, [client.get_experiment_by_name(scale_store.NAME).experiment_id])


def no_op_suite(uri: str, runs: int, capsys) -> str:
    result = run(SuiteSpec(tracking_uri=uri, seeds=runs // 2, exercises=[scale_store.exercise(runs)]))
    out = capsys.readouterr().out
    assert result.status == ExitStatus.OK, out[-2000:]
    assert f"{runs} runs in 1 exercises" in out and f"{runs} already done, 0 to run" in out, out[-2000:]
    return out


def check_layout(runs: list, jobs: list[Job]) -> dict:
    """One parent, every run FINISHED, one child per job of the suite's plan; the parent's tags (its per-variant
    summaries, lm/tracking/aggregates.py)."""
    parents = [r for r in runs if r.data.tags.get("role") == "exercise"]
    children = [r for r in runs if r.data.tags.get("role") != "exercise"]
    assert len(parents) == 1 and len(children) == len(jobs)
    assert {r.info.status for r in runs} == {"FINISHED"}
    assert {r.data.tags["mlflow.parentRunId"] for r in children} == {parents[0].info.run_id}
    assert Counter(r.data.tags["config_hash"] for r in children) == Counter(j.config_hash for j in jobs)
    return parents[0].data.tags


def test_a_suite_on_more_than_ten_thousand_finished_runs_trains_nothing_and_makes_no_second_parent(
        tmp_path, capsys):
    folder = tmp_path / "store"
    jobs = scale_store.build(folder, RUNS, params=False)
    uri = f"sqlite:///{folder}/mlflow.db"
    assert len(jobs) == RUNS > tracking.PAGE
    no_op_suite(uri, RUNS, capsys)
    runs = experiment_runs(uri)
    assert runs[-1].data.tags.get("role") == "exercise"  # the oldest: the first a page of the newest leaves out
    summaries = check_layout(runs, jobs)
    for variant in ("h2", "h4"):  # the aggregates count the oldest seeds too
        assert summaries[f"{variant}/val_loss"].endswith(f"({RUNS // 2} seeds)"), summaries


def test_every_listing_of_runs_reads_every_page(tmp_path, monkeypatch, capsys):
    """The same store in small: ten runs read three at a time, by the suite, the aggregates, knock-out's discovery
    and the report's reader."""
    monkeypatch.setattr(tracking, "PAGE", 3)
    folder = tmp_path / "store"
    jobs = scale_store.build(folder, 10, params=False)
    uri = f"sqlite:///{folder}/mlflow.db"
    no_op_suite(uri, 10, capsys)
    summaries = check_layout(experiment_runs(uri), jobs)
    assert summaries["h4/val_loss"].endswith("(5 seeds)") and summaries["h2/val_loss"].endswith("(5 seeds)")
    assert len(finished_runs(MlflowClient(uri), scale_store.NAME)) == 10
    assert set(Reader(uri).exercise_files()) == {scale_store.NAME}
