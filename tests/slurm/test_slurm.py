"""The suite on a real SLURM (one node, tests/slurm/cluster.sh): `launcher=slurm` trains the quick suite through
sbatch into a fresh store with the local launcher's numbers, a second call trains nothing, the report builds from
that store; and SLURM's faults: scancel, a job past its time limit, a job past its memory limit, a partition that
does not exist, Ctrl-C.

    tests/slurm/cluster.sh && python -m pytest -q tests/slurm
"""
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from mlflow.tracking import MlflowClient

from tests.reliability import harness

# The quick suite: nopos trains two runs; baseline's one is nopos/pos's config, so it is copied, not trained.
QUICK = ["quick=true", "ablations=[nopos,baseline]"]
# The faults hit the quick baseline (20 steps, a checkpoint at step 10): the reference has its numbers.
ONE = ["quick=true", "ablations=[baseline]"]
STALL = "step:15:stall"  # the job's run waits after step 15 for a signal, so a fault comes at a known step


def slurm(folder: Path, *extra: str) -> list[str]:
    return ["launcher=slurm", f"launcher.folder={folder}", *extra]


def job_ids(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.isdigit()) if folder.exists() else []


def queued(ids: list[str]) -> list[str]:
    """Those of these jobs that SLURM still has pending or running."""
    out = subprocess.run(["squeue", "-h", "--me", "-t", "PENDING,RUNNING,COMPLETING", "-o", "%i"],
                         capture_output=True, text=True, check=True).stdout.split()
    return [i for i in ids if i in out]


def wait_until(test, timeout: float, what: str):
    deadline = time.time() + timeout
    while not (found := test()):
        assert time.time() < deadline, f"no {what} after {timeout:.0f} s"
        time.sleep(0.5)
    return found


def checkpoint_step(store: Path) -> int:
    """The step of the one run's checkpoint (the next suite resumes from it)."""
    (ckpt,) = (store / "checkpoints").glob("*/last.ckpt")
    return torch.load(ckpt, map_location="cpu", weights_only=False)["global_step"]


def children(client: MlflowClient) -> list:
    """Every run in the store but the exercises' parent runs."""
    return [r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])
            if r.data.tags.get("role") != "exercise"]


def same_numbers(store: Path, reference, args=ONE) -> harness.Audit:
    """Every run the command asks for FINISHED once, intact, with the reference's val_loss and curves."""
    a = harness.audit(store, args)
    assert not a.problems, a.problems
    for key, curves in a.curves.items():
        for metric in ("train_loss", "val_loss"):
            got, want = curves[metric], reference.curves[key][metric]
            assert [s for s, _ in got] == [s for s, _ in want], (key, metric)
            assert max(abs(x - y) for (_, x), (_, y) in zip(got, want)) < 1e-6, (key, metric)
    return a


@pytest.fixture(scope="module")
def past_its_limit(cluster, tmp_path_factory):
    """The quick baseline through sbatch with timeout_min=1, its run stalled after step 15 until SLURM ends the job at
    its limit: started first (the reference asks for it), in a thread of its own, so that the minute or more SLURM
    takes to reach the limit, when the job holds one of the node's 2 CPUs and uses none, overlaps the tests before
    the one that reads it (133 s of waiting in one test, in the CI run of 2026-12-04)."""
    tmp = tmp_path_factory.mktemp("time-limit")
    store, folder = tmp / "store", tmp / "jobs"
    with ThreadPoolExecutor(1) as pool:
        yield store, folder, pool.submit(harness.run, "lm.commands.suite",
                                         [*ONE, *slurm(folder, "launcher.parameters.timeout_min=1")], store,
                                         fault=STALL, timeout=300)


@pytest.fixture(scope="module")
def reference(cluster, past_its_limit, tmp_path_factory):
    """The quick suite with the local launcher: the numbers SLURM's runs must have."""
    store = tmp_path_factory.mktemp("local") / "store"
    o = harness.run("lm.commands.suite", QUICK, store)
    assert o.rc == 0, o.err[-3000:]
    return harness.audit(store, QUICK)


@pytest.fixture(scope="module")
def on_slurm(cluster, tmp_path_factory):
    """The quick suite through sbatch into a fresh store."""
    tmp = tmp_path_factory.mktemp("slurm")
    store, folder = tmp / "store", tmp / "jobs"
    o = harness.run("lm.commands.suite", [*QUICK, *slurm(folder)], store)
    return store, folder, o


def test_the_quick_suite_on_slurm_finishes_every_run_with_the_local_launchers_numbers(reference, on_slurm, cluster):
    store, folder, o = on_slurm
    assert o.rc == 0, o.out[-2000:] + o.err[-3000:]
    assert "3 runs in 2 exercises" in o.out and "0 already done, 3 to run" in o.out
    assert "launching on submitit (slurm)" in o.out
    assert "quick/baseline/base/seed1: copied from quick/nopos/pos/seed1 (the same config)" in o.out
    assert len(job_ids(folder)) == 2                    # one sbatch job per trained run
    a = same_numbers(store, reference, QUICK)
    assert a.finished == 3 and a.val_loss == reference.val_loss
    harness.record("slurm", version=cluster, quick_suite=f"{a.finished} of 3 runs FINISHED through sbatch, the "
                                                          f"local launcher's numbers")


def test_on_slurm_the_terminal_shows_the_suite_not_the_scheduler(on_slurm):
    """No accounting here: the missing sacct is said once, in the launch line; no warning per poll, no srun advice,
    in the terminal or in the jobs' logs, where Lightning keeps out of SLURM's requeueing."""
    _, folder, o = on_slurm
    for job in job_ids(folder):
        log = (folder / job / f"{job}_0_log.err").read_text()
        assert "srun" not in log and "requeu" not in log.lower() and "Warning" not in log, log[-2000:]
    launch = [ln for ln in o.out.splitlines() if ln.startswith("launching on")]
    assert len(launch) == 1 and launch[0].endswith("job states from squeue (sacct: Slurm accounting storage is "
                                                   "disabled)")
    assert o.err.strip() == "", o.err[-3000:]
    assert "sacct" not in o.out.replace(launch[0], "")
    assert [ln for ln in o.out.splitlines() if ln.startswith("[")] == [
        ln for ln in o.out.splitlines() if ln.startswith("[") and ("finished in" in ln or "copied from" in ln)]


def test_a_second_call_on_slurm_trains_nothing(on_slurm):
    store, folder, _ = on_slurm
    before = job_ids(folder)
    o = harness.run("lm.commands.suite", [*QUICK, *slurm(folder)], store)
    assert o.rc == 0, o.err[-3000:]
    assert "3 already done, 0 to run" in o.out and "nothing to run" in o.out
    assert job_ids(folder) == before                    # nothing submitted


def test_the_report_builds_from_the_slurm_store(on_slurm, tmp_path):
    from analysis import report

    store, _, _ = on_slurm
    assert report.main([*QUICK, f"tracking_uri={harness.uri(store)}", f"out={tmp_path}", "log=false"]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "nopos" in md and (tmp_path / "report.html").stat().st_size > 0


def test_scancel_of_a_running_job_leaves_its_run_resumable_and_the_next_call_resumes_it(cluster, reference, tmp_path):
    """A plain scancel signals the job's srun as well, which kills the run at once: no step finishes, the run is
    marked FAILED with SLURM's reason, and its checkpoint of step 10 is where the next call resumes."""
    store, folder = tmp_path / "store", tmp_path / "jobs"
    p, log = harness.start("lm.commands.suite", [*ONE, *slurm(folder)], store, fault=STALL)
    wait_until(lambda: log.read_text().strip(), 300, "run reaching step 15")
    (job,) = job_ids(folder)
    subprocess.run(["scancel", job], check=True)
    o = harness.finish(p, log)
    lines = [ln for ln in o.out.splitlines() if ln.startswith("[1/1]")]
    # SLURM's state for it, whichever of srun's lines the job's log ends on
    assert len(lines) == 1 and "failed" in lines[0] and f"job {job} CANCELLED: " in lines[0], o.out[-3000:]
    assert not harness.running_children(store) and not queued([job])
    assert checkpoint_step(store) == 10
    again = harness.run("lm.commands.suite", [*ONE, *slurm(folder)], store)
    assert again.rc == 0 and "0 already done, 1 to run" in again.out, again.err[-3000:]
    same_numbers(store, reference)
    harness.record("slurm", scancel=f"run FAILED at step 15, resumed from step 10 to the same numbers")


def test_a_job_past_its_time_limit_stops_with_a_checkpoint_and_the_next_call_resumes_it(past_its_limit, reference):
    """timeout_min=1, SLURM's least: no warning signal fits in a minute (lm/suite/launchers/submitit.py), so the job runs
    past its limit (SLURM checks limits every 30 s) and SLURM kills it; the run is FAILED with its checkpoint of step
    10. Had a warning come (SIGUSR2), the run would finish its step, save a checkpoint and end KILLED."""
    store, folder, suite = past_its_limit
    o = suite.result()
    run = harness.audit(store, ONE, artifacts=False)
    assert not run.running and run.finished == 0, o.out[-3000:]
    client = MlflowClient(harness.uri(store))
    (child,) = children(client)
    reason = child.data.tags.get("failure_reason", "")
    step = checkpoint_step(store)
    if child.info.status == "KILLED":  # the warning (SIGUSR2), or SLURM's SIGTERM at the limit while stalled
        assert (reason, step) in {("stopped by SIGUSR2 at step 15", 15), ("interrupted", 10),
                                  ("interrupted", 15)}, reason
    else:
        assert child.info.status == "FAILED" and step == 10, reason
    wait_until(lambda: not queued(job_ids(folder)), 60, "empty queue")   # SLURM may still be COMPLETING it
    again = harness.run("lm.commands.suite", [*ONE, *slurm(folder)], store)
    assert again.rc == 0 and "0 already done, 1 to run" in again.out, again.err[-3000:]
    same_numbers(store, reference)
    how = f"stopped: {reason}" if child.info.status == "KILLED" else "killed by SLURM at the limit"
    harness.record("slurm", time_limit=f"run {child.info.status} ({how}), resumed from step "
                                       f"{step} to the same numbers")


def test_a_job_past_its_memory_limit_fails_its_run_alone_and_the_next_call_trains_it_again(cluster, reference,
                                                                                           tmp_path):
    """mem_gb=1.5 and, from its 5th step, one run taking more and more memory (the `hog` fault, the first run there
    alone): SLURM kills its job at the limit (cluster.sh has slurmstepd sample memory every second), which ends
    FAILED with slurmstepd's line in its log, not OUT_OF_MEMORY (that takes cgroups). The run ends FAILED with one
    line that says so, the other run finishes beside it, the suite prints its summary and exits 1, and the next call
    trains the lost run again, in place, to the local launcher's numbers."""
    store, folder = tmp_path / "store", tmp_path / "jobs"
    args = ["quick=true", "ablations=[nopos]"]
    o = harness.run("lm.commands.suite", [*args, *slurm(folder, "launcher.parameters.mem_gb=1.5")], store,
                    fault="step:5:hog", timeout=300)
    assert [f.split()[0] for f in o.fired] == ["step:5:hog"], o.fired
    assert o.rc == 1 and "seeds  finished" in o.out and "Traceback" not in o.err, o.out[-3000:] + o.err[-3000:]
    failed = [ln for ln in o.out.splitlines() if ln.startswith("[") and "failed" in ln]
    assert len(failed) == 1 and "killed by SLURM at its memory limit (exceeded" in failed[0], o.out[-3000:]
    client = MlflowClient(harness.uri(store))
    runs = children(client)
    assert sorted(r.info.status for r in runs) == ["FAILED", "FINISHED"], [r.info.status for r in runs]
    (lost,) = [r for r in runs if r.info.status == "FAILED"]
    reason = lost.data.tags["failure_reason"]
    assert reason.startswith("job ") and ": out of memory (log: " in reason, reason
    wait_until(lambda: not queued(job_ids(folder)), 60, "empty queue")
    again = harness.run("lm.commands.suite", [*args, *slurm(folder)], store)
    assert again.rc == 0 and "1 already done, 1 to run" in again.out, again.out[-3000:] + again.err[-3000:]
    same_numbers(store, reference, args)
    assert client.get_run(lost.info.run_id).info.status == "FINISHED"   # trained again in place
    harness.record("slurm", memory_limit=f"1 of 2 runs FAILED ({reason.split(' (log: ')[0]}), 1 finished beside it; "
                                         f"exit 1; the next call trained it again in place to the same numbers")


def test_a_partition_that_does_not_exist_is_one_line_per_run_and_leaves_nothing_running(cluster, tmp_path):
    store, folder = tmp_path / "store", tmp_path / "jobs"
    o = harness.run("lm.commands.suite", [*QUICK, *slurm(folder, "launcher.parameters.slurm_partition=nosuch")], store)
    assert o.rc == 1, o.err[-3000:]
    lines = [ln for ln in o.out.splitlines() if ln.startswith("[")]
    assert len(lines) == 3, o.out[-3000:]
    trained = [ln for ln in lines if "copied" not in ln and "quick/nopos" in ln]
    assert len(trained) == 2 and all("could not submit the job to slurm: " in ln and "invalid partition" in ln.lower()
                                     for ln in trained), lines
    assert job_ids(folder) == [] and not harness.running_children(store)
    assert not harness.audit(store, QUICK, artifacts=False).running   # parents included
    harness.record("slurm", bad_partition=f"{len(trained)} runs refused in one line each, none left RUNNING")


def test_ctrl_c_of_the_suite_cancels_its_jobs_and_their_runs_end_killed(cluster, tmp_path):
    """The suite passes the Ctrl-C on to its running jobs' steps (`scancel --signal=INT`: a SIGTERM would make SLURM
    end the step at once): each run finishes its step, saves a checkpoint and ends KILLED, and its job ends."""
    import os
    import signal

    store, folder = tmp_path / "store", tmp_path / "jobs"
    p, log = harness.start("lm.commands.suite", [*ONE, *slurm(folder)], store, fault=STALL)
    wait_until(lambda: log.read_text().strip(), 300, "run reaching step 15")
    os.killpg(p.pid, signal.SIGINT)                     # as the terminal sends it
    o = harness.finish(p, log)
    assert o.rc == 130, o.out[-2000:] + o.err[-2000:]
    assert o.err.strip().splitlines()[-1].startswith("interrupted:")
    (job,) = job_ids(folder)
    assert queued([job]) == []
    client = MlflowClient(harness.uri(store))
    (child,) = children(client)
    assert child.info.status == "KILLED" and child.data.tags["failure_reason"] == "stopped by SIGINT at step 15"
    assert checkpoint_step(store) == 15 and not harness.running_children(store)
    harness.record("slurm", ctrl_c="exit 130, squeue empty, run KILLED at step 15 with its checkpoint")
