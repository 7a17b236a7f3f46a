"""Kill anywhere: the quick suite SIGKILLed mid-step, during validation, before a write to MLflow and while writing a
checkpoint (and once interrupted with Ctrl-C), restarted with the same command after each: in the end every run
has finished exactly once, with all its numbers, and nothing is left RUNNING."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from lm.suite import load_suite_config, plan
from lm.suite.bookkeeping import find_runs, open_run
from lm.tracking.store import Store
from tests.reliability import harness


def test_every_fault_struck_where_it_was_aimed(kill_loop):
    _, steps, _ = kill_loop
    *faulted, final = steps
    kills = [o for o in faulted if not o.fault.endswith(":sigint")]
    harness.record("kill", faults_injected=sum(len(o.fired) for o in faulted), kills=len(kills),
                   interrupts=len(faulted) - len(kills), points=sorted({o.fault.split(":")[0] for o in faulted}),
                   restarts=len(steps) - 1, seconds=round(sum(o.seconds for o in steps)))
    for o in faulted:
        assert [f.split()[0].removesuffix(":kill") for f in o.fired] == [o.fault], \
            f"{o.fault} did not fire: {o.fired}\n{o.err[-3000:]}"
        if o in kills:
            assert o.killed, f"{o.fault}: exit status {o.rc}\n{o.err[-3000:]}"
        else:
            assert o.rc == 130 and "interrupted: finished runs are kept; run the same command again" in o.err, o.err
    assert len(kills) >= 5 and {o.fault.split(":")[0] for o in kills} >= {"step", "validation", "logging", "checkpoint"}
    assert final.rc == 0 and not final.fired, final.err[-3000:]
    assert "Traceback" not in "".join(o.err for o in steps)


def test_no_process_outlives_its_killed_suite(kill_loop):
    """Killing the suite leaves its workers orphaned: each notices and dies on its own within seconds."""
    _, steps, _ = kill_loop
    assert all(not o.survivors for o in steps), [(o.fault, o.survivors) for o in steps if o.survivors]


def test_a_kill_leaves_runs_running_and_the_next_start_clears_them(kill_loop):
    _, steps, audit = kill_loop
    for o in steps[:-1]:
        if o.killed:
            assert o.running, f"{o.fault}: the kill left no RUNNING run, so this test proves nothing"
        else:  # Ctrl-C: the interrupted run ended KILLED by itself
            assert not o.running, o.running
    assert not steps[-1].running and not audit.running


def test_a_start_marks_runs_left_running_killed(fresh, monkeypatch):
    """What a kill leaves behind, made directly: runs created RUNNING as they start and never ended. The next suite
    to start marks each KILLED (then trains it again in place)."""
    monkeypatch.setenv("TINYGPT_STORE", str(fresh))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    p = plan(load_suite_config(harness.QUICK))
    jobs = p.jobs
    store = Store()
    find_runs(store, p.exercises, jobs, quick=True)
    assert not any(j.run_id for j in jobs)   # a run is created as it starts, so that its duration is its own
    left = {open_run(store, j) for j in jobs}
    assert {store.client.get_run(r).info.status for r in left} == {"RUNNING"}
    p = plan(load_suite_config(harness.QUICK))
    again = p.jobs
    find_runs(store, p.exercises, again, quick=True)
    assert {j.run_id for j in again} == left  # the same runs, to be trained in place: no duplicates
    for r in left:
        run = store.client.get_run(r)
        assert run.info.status == "KILLED" and "its process had died" in run.data.tags["failure_reason"]


def test_one_finished_run_per_variant_and_seed_and_no_duplicates(kill_loop):
    _, _, audit = kill_loop
    harness.record("kill", runs_expected=len(harness.expected_jobs(harness.QUICK)), runs_finished=audit.finished,
                   runs_lost=len(audit.lost), duplicate_runs=len(audit.duplicate_runs),
                   points_logged_twice=len(audit.duplicate_points), stuck_running=len(audit.running))
    assert not audit.lost and not audit.duplicate_runs and not audit.running, audit.problems
    assert audit.finished == len(harness.expected_jobs(harness.QUICK)) == 6


def test_every_finished_run_is_intact(kill_loop):
    """Its metrics, a train_loss for each step exactly once, val_loss at each validation once, its artifacts."""
    _, _, audit = kill_loop
    harness.record("kill", runs_damaged=len(audit.damaged))
    assert not audit.damaged and not audit.duplicate_points, audit.problems


def test_no_checkpoint_or_part_file_is_left(kill_loop):
    store, _, _ = kill_loop
    assert not [p for p in (store / "checkpoints").rglob("*") if p.is_file()]


def test_a_fault_fires_though_an_earlier_suite_with_the_same_pid_left_its_mark():
    """Pids come round (pid_max is 32768 here) and the marks stay in /tmp: an earlier root's mark under the same pid
    would keep the fault from firing. Each root's mark is its pid and its start."""
    code = ("import os, tempfile\n"
            "from lm import faults\n"
            "old = os.path.join(tempfile.gettempdir(), f'tinygpt-fault-{os.getpid()}-validation-3')\n"
            "open(old, 'a').close()\n"   # an earlier root's mark, in the old name, under this pid
            "try:\n"
            "    print(faults._first(os.getpid()), faults._first(os.getpid()), os.environ['TINYGPT_FAULT_MARK'])\n"
            "finally:\n"
            "    os.remove(old)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYGPT_FAULT")} | {"TINYGPT_FAULT": "validation:3"}
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    first, again, mark = p.stdout.split()
    assert (first, again) == ("True", "False")   # its own mark made once: the first process there takes the fault
    (Path(tempfile.gettempdir()) / f"tinygpt-fault-{mark}-validation-3").unlink()
