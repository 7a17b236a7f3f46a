"""The README's `make bench` commands, run as a user types them, at quick size: each section prints its rows."""
import subprocess

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


def test_make_bench_only_report_times_the_report_on_the_store_make_report_reads(quick_store):
    env = user_env({"TINYGPT_STORE": str(quick_store)})
    env.pop("MLFLOW_TRACKING_URI", None)
    p = subprocess.run([*MAKE, "bench", "ARGS=quick=true only=report"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = {line.strip().split("  ")[0]: line for line in p.stdout.splitlines() if line.startswith("  ")}
    assert "target ≤ 10 s on the full 3-seed store" in rows["python -m analysis.report"]
    assert f"`make report` on sqlite:///{quick_store}/mlflow.db, the quick suite's runs" in p.stdout
