"""`make ablations ARGS="plan=true"`: the runs, which are done, which copy a twin, and the time, from the store's own
runs; nothing trained. Its estimate against the time the store that ran the suite recorded."""
import os
import re
import sqlite3
import subprocess
import sys

from lm.suite import SuiteSpec, estimate, plan
from lm.suite.runner import OVERHEAD_TAG
from tests.conftest import ROOT

ABLATIONS = ["nomask"]


def runs_in(db) -> int:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]


def suite(uri: str) -> None:
    """`make ablations` as a user runs it: a process of its own."""
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    p = subprocess.run([sys.executable, "-m", "lm.commands.suite", "quick=true", f"ablations=[{','.join(ABLATIONS)}]"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]


def recorded_seconds(db) -> float:
    """The time the store's suite took, as it recorded it: from its first run's start to its last run's end, and
    its own time beside them (the parent run's suite.overhead_s)."""
    with sqlite3.connect(db) as con:
        start, end = con.execute("SELECT min(r.start_time), max(r.end_time) FROM runs r JOIN tags t ON "
                                 "t.run_uuid = r.run_uuid WHERE t.key = 'variant'").fetchone()
        (overhead,) = con.execute("SELECT max(CAST(value AS REAL)) FROM tags WHERE key = ?",
                                  (OVERHEAD_TAG,)).fetchone()
    return (end - start) / 1000 + overhead


def test_the_plan_estimates_the_suite_that_ran_within_a_quarter_of_its_time_and_counts_what_is_done(tmp_path):
    """The plan of a suite, timed from the store that ran it, against the time that store recorded for it (both from
    the same runs on the same machine, so a busy machine moves both: no clock of the test's own is read)."""
    first, fresh = f"sqlite:///{tmp_path}/a/mlflow.db", f"sqlite:///{tmp_path}/b/mlflow.db"
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    spec = SuiteSpec(ablations=ABLATIONS, quick=True)
    nothing = estimate.estimate(plan(spec), estimate.read(first))
    assert all(r.state == "train" for r in nothing.rows) and "a default of" in nothing.basis
    suite(first)
    ahead = estimate.estimate(plan(spec), estimate.read(first), estimate.read(fresh))
    assert [r.state for r in ahead.rows] == ["train"] * len(ahead.rows) and "default" not in ahead.basis
    took = recorded_seconds(tmp_path / "a" / "mlflow.db")
    print(f"the plan's estimate {ahead.seconds:.1f} s; the suite took {took:.1f} s")   # the figure, in CI's log
    assert abs(ahead.seconds - took) <= 0.25 * took, (ahead.seconds, took)
    # planned again on the store that ran: every run done, nothing to run, and nothing trained by asking
    before = runs_in(tmp_path / "a" / "mlflow.db")
    env = {**os.environ, "MLFLOW_TRACKING_URI": first}
    p = subprocess.run([sys.executable, "-m", "lm.commands.suite", "quick=true", f"ablations=[{ABLATIONS[0]}]",
                        "plan=true"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "2 already done, 0 copies of a twin, 0 to train" in p.stdout and "nothing to run" in p.stdout
    assert runs_in(tmp_path / "a" / "mlflow.db") == before


def test_plan_true_on_a_new_store_lists_the_runs_says_its_figures_are_defaults_and_creates_nothing(tmp_path):
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path}/mlflow.db"}
    p = subprocess.run([sys.executable, "-m", "lm.commands.suite", "quick=true", "ablations=[nomask,heads]",
                        "plan=true"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^  quick/nomask/masked/seed1\s+to train, about \d+ s$", p.stdout, re.M), p.stdout
    assert re.search(r"^  quick/heads/h8/seed1\s+to train, about \d+ s$", p.stdout, re.M)
    assert "0 already done" in p.stdout
    assert "a default of 120 ms a step" in p.stdout and "nothing was trained" in p.stdout
    assert not (tmp_path / "mlflow.db").exists()
