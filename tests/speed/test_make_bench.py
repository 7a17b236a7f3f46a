"""The README's `make bench` commands, run as a user types them, at quick size: each section prints its rows."""
import re
import subprocess

from lm.tracking.store_check import shown
from tests.conftest import MAKE, ROOT, user_env


def test_make_bench_quick_prints_the_sampling_and_start_up_rows_with_their_targets():
    p = subprocess.run([*MAKE, "bench", "ARGS=quick=true only=sample,startup"], cwd=ROOT, env=user_env(),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = {line.strip().split("  ")[0]: line for line in p.stdout.splitlines() if line.startswith("  ")}
    assert "goal ≤ 0.15 s" in rows["KV cache"] and "same characters: True" in rows["speed-up"]
    assert "1 thread" in next(line for line in p.stdout.splitlines() if line.startswith("sampling"))
    assert "target ≤ 1.5 s" in rows["python -m lm.commands.train model.n_head=0 (a bad value)"]
    assert "target ≤ 2.0 s" in rows["python -m lm.commands.train --cfg"]
    assert p.stdout.splitlines()[0].startswith("python -m lm.tools.bench quick=true only=sample,startup: ")


def test_make_bench_only_report_times_the_report_on_the_store_make_report_reads_and_leaves_it_as_it_was(quick_store):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{quick_store}/mlflow.db")
    before = {e.name for e in client.search_experiments()}
    env = user_env({"TINYGPT_STORE": str(quick_store)})
    env.pop("MLFLOW_TRACKING_URI", None)
    p = subprocess.run([*MAKE, "bench", "ARGS=quick=true only=report"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = {line.strip().split("  ")[0]: line.strip() for line in p.stdout.splitlines() if line.startswith("  ")}
    assert re.fullmatch(r"python -m analysis\.report +[\d.]+ s +target ≤ 10 s on the full 3-seed store; \d+ runs",
                        rows["python -m analysis.report"]), rows["python -m analysis.report"]
    assert re.fullmatch(r"a bare read of the same runs +[\d.]+ s +\d+ histories, \d+ artifacts",
                        rows["a bare read of the same runs"]), rows["a bare read of the same runs"]
    ratio = re.match(r"the report against the bare read +([\d.]+)×", rows["the report against the bare read"])
    assert float(ratio[1]) > 0
    assert f"`make report` on {shown(f'sqlite:///{quick_store}/mlflow.db')}, the quick suite's runs" in p.stdout
    assert {e.name for e in client.search_experiments()} == before   # no report run logged


def test_the_report_row_on_a_store_with_no_runs_says_to_run_the_ablations_first(tmp_path, monkeypatch):
    from lm.tools import bench_process
    from tests.speed.test_bench_process import Rows

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    table = Rows()
    bench_process.report(table, str(tmp_path), 1, quick=False)
    assert table.sections[-1].startswith("`make report` on ")
    assert table.rows["python -m analysis.report"][1] == "run `make ablations` first"
