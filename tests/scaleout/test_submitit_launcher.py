"""The SLURM code path, run here through submitit's local executor: one job (one process) per run, landing in MLflow
exactly as a local run does; a finished run is never launched again, whichever launcher asks; a launcher that
cannot launch is one line and touches nothing."""
import contextlib
import fnmatch
import io
import operator
import os
import shutil
import time

import pytest
import torch
from mlflow.tracking import MlflowClient
from submitit.core.utils import DelayedSubmission

from lm.commands import suite as suite_command
from lm.settings import measures
from lm.settings.config import RunConfig
from lm.suite import LauncherConfig, load_suite_config
from lm.suite.worker import run_job
from lm.tracking import reference


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The baseline trained by a local worker, then baseline and nopos asked of submitit: one job, for nopos' nopos;
    nopos' pos is the quick baseline's config, so the suite copies that run's results instead."""
    tmp = tmp_path_factory.mktemp("submitit")
    folder = tmp / "jobs"
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        mp.setenv("TINYGPT_STORE", str(tmp / "store"))
        outputs = []
        for args in (["ablations=[baseline]", "workers=1"],
                     ["ablations=[baseline,nopos]", "launcher=submitit_local", f"launcher.folder={folder}"]):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert suite_command.main(["quick=true", *args]) == 0, out.getvalue()[-3000:]
            outputs.append(out.getvalue())
        yield MlflowClient(f"sqlite:///{tmp}/store/mlflow.db"), folder, outputs, mp


def runs(client, name):
    exp = client.get_experiment_by_name(name)
    found = client.search_runs([exp.experiment_id])
    return [r for r in found if r.data.tags.get("role") == "exercise"], \
        [r for r in found if r.data.tags.get("role") != "exercise"]


def snapshot(client):
    return {r.info.run_id: (r.info.status, r.info.end_time)
            for name in ("quick/baseline", "quick/nopos") for r in sum(runs(client, name), [])}


def test_each_run_is_a_submitit_job(store):
    _, folder, (_, out), _ = store
    assert "3 runs in 2 exercises" in out and "1 already done, 2 to run" in out
    assert "launching on submitit (local): up to" in out
    assert "quick/nopos/pos/seed1: copied from quick/baseline/base/seed1 (the same config)" in out
    jobs = [p for p in folder.iterdir() if p.is_dir() and p.name.isdigit()]
    assert len(jobs) == 1 and all(list(j.glob("*_result.pkl")) for j in jobs)
    for j in jobs:   # what each job was given: run_job, its run's config with the job's cpus_per_task as threads
        (submitted,) = j.glob("*_submitted.pkl")
        delayed = DelayedSubmission.load(submitted)
        assert run_job in (delayed.function, *delayed.args)   # (wrapped to hold the suite's workers lock)
        (cfg,) = [a for a in delayed.args if isinstance(a, RunConfig)]
        assert cfg.runtime.threads == 1


def where_read(run) -> set[str]:
    """A run's metrics from the measurements a suite makes only where its exercise reads them."""
    patterns = [p for m in measures.TABLE if m.when == measures.When.READ for p in m.provides]
    return {k for k in run.data.metrics if any(fnmatch.fnmatchcase(k, p) for p in patterns)}


def test_job_runs_land_in_mlflow_exactly_like_local_ones(store):
    client, *_ = store
    _, (local,) = runs(client, "quick/baseline")
    parents, jobs = runs(client, "quick/nopos")
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    assert sorted(r.info.run_name for r in jobs) == ["nopos/seed1", "pos/seed1"]
    files = {a.path for a in client.list_artifacts(local.info.run_id)}
    for r in jobs:
        assert r.info.status == "FINISHED" and r.data.tags["mlflow.parentRunId"] == parents[0].info.run_id
        assert set(r.data.params) == set(local.data.params)
        # but the lesson's own curve, which baseline's charts log beside its runs (lm/tracking/reference.py), and
        # the measurements made only where an exercise's claims read them (baseline's and nopos' differ)
        assert set(r.data.metrics) - where_read(r) == \
            {m for m in local.data.metrics if not m.startswith(reference.PREFIX)} - where_read(local)
        assert {t for t in r.data.tags if not t.startswith("mlflow.")} - {"copied_from", "source_duration"} == \
               {t for t in local.data.tags if not t.startswith("mlflow.")}
        assert {a.path for a in client.list_artifacts(r.info.run_id)} == files
    assert all(len(client.get_metric_history(r.info.run_id, "train_loss")) == 20 for r in jobs)
    assert {r.info.run_name: r.data.tags.get("copied_from") for r in jobs} == {"nopos/seed1": None,
                                                                               "pos/seed1": local.info.run_id}


def test_a_finished_run_is_never_launched_again(store):
    client, folder, _, mp = store
    before, jobs_before = snapshot(client), sorted(folder.iterdir())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert suite_command.main(["quick=true", "ablations=[baseline,nopos]", "launcher=submitit_local",
                           f"launcher.folder={folder}"]) == 0
    assert "3 already done, 0 to run" in out.getvalue()
    assert sorted(folder.iterdir()) == jobs_before
    assert {k: v[0] for k, v in snapshot(client).items()} == {k: v[0] for k, v in before.items()}


@pytest.mark.parametrize("args,message", [
    (["launcher=slurm"], "launcher=slurm: SLURM's sbatch is not on this machine's PATH"),
    (["launcher=foo"], "launcher=foo: no such option (conf/launcher/ has local, slurm, submitit_local)"),
    (["launcher.name=foo"], "launcher.name='foo' must be local or submitit"),
    (["launcher=submitit_local", "launcher.cluster=pbs"], "launcher.cluster='pbs' must be one of slurm, local, debug"),
    (["launcher=submitit_local", "+launcher.parameters.queue=long"],
     "launcher.parameters: Parameter 'queue' need to be prefixed by an executor name."),
    pytest.param(["launcher=submitit_local", "launcher.parameters.gpus_per_node=1"],
                 "launcher.parameters.gpus_per_node=1, but this machine has 0 GPUs",
                 marks=pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")),
])
def test_a_launcher_that_cannot_launch_is_one_line_and_touches_nothing(store, args, message, monkeypatch, capsys):
    client, *_ = store
    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name in ("sbatch", "srun") else which(name))
    before = snapshot(client)
    assert suite_command.main(["quick=true", "ablations=[baseline,nopos,heads]", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {message}") and "\n" not in err
    assert snapshot(client) == before                 # finished runs stay finished; nothing created, nothing marked


def test_a_job_that_fails_says_why_in_one_line(tmp_path):
    from lm.suite.launchers.submitit import SubmititLauncher

    launcher = SubmititLauncher(LauncherConfig(name="submitit", cluster="local", folder=str(tmp_path), max_jobs=0,
                                               parameters={"timeout_min": 5, "cpus_per_task": 1}))
    assert (launcher.threads, launcher.capacity) == (1, os.cpu_count() or 1)
    job = launcher.submit(operator.truediv, 1, 0)
    ok = launcher.submit(operator.add, 2, 3)
    deadline = time.time() + 120
    while not (job.done() and ok.done()) and time.time() < deadline:
        time.sleep(0.2)
    assert ok.result() == 5
    with pytest.raises(RuntimeError) as e:
        job.result()
    assert "ZeroDivisionError: division by zero" in str(e.value) and "\n" not in str(e.value)
    assert "_log.err" in str(e.value)                 # where the whole traceback is
    launcher.shutdown(cancel=False)


def test_launcher_slurm_writes_the_sbatch_script_from_conf(tmp_path, monkeypatch):
    """No cluster here: a stand-in sbatch that accepts the job shows what SLURM would be asked for."""
    import signal

    from lm.suite.launchers.submitit import SubmititLauncher

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in {"sbatch": 'echo "Submitted batch job 4242"', "srun": "exit 0",
                       "scancel": 'echo "$@" >> "$0.log"', "squeue": 'echo "4242|RUNNING|node1"',
                       "sacct": 'echo "Slurm accounting storage is disabled" >&2; exit 1'}.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    s = load_suite_config(["launcher=slurm", "launcher.parameters.slurm_partition=gpu",
                                 "launcher.parameters.gpus_per_node=1", f"launcher.folder={tmp_path / 'jobs'}"])
    handler = signal.getsignal(signal.SIGINT)
    launcher = SubmititLauncher(s.launcher)
    assert (launcher.capacity, launcher.threads) == (32, 1)   # threads: the job's cpus_per_task
    assert launcher.describe().startswith("submitit (partition gpu): up to 32 jobs at once, 1 CPU, 1 GPU, 4 GB each")
    assert launcher.describe().endswith("; job states from squeue (sacct: Slurm accounting storage is disabled)")
    job = launcher.submit(operator.add, 2, 3)
    assert job.job.job_id == "4242"
    script = (tmp_path / "jobs" / "4242" / "4242_submission.sh").read_text()
    for line in ("--partition=gpu", "--gpus-per-node=1", "--cpus-per-task=1", "--mem=4GB", "--time=120",
                 "--job-name=tinygpt", "--signal=USR2@90"):
        assert f"#SBATCH {line}\n" in script
    launcher.shutdown(cancel=True)                     # Ctrl-C or an error: the job is cancelled with scancel
    assert (bin_dir / "scancel.log").read_text().splitlines() == ["--state=PENDING 4242",  # queued: gone
                                                                   "--state=RUNNING --signal=INT 4242"]  # its run stops
    assert signal.getsignal(signal.SIGINT) == handler  # the suite's Ctrl-C handling is back as it was
    # A limit of two minutes: SLURM's warning a minute before it, not 90 s (at once, before the job can answer it)
    s = load_suite_config(["launcher=slurm", "launcher.parameters.timeout_min=2",
                                 f"launcher.folder={tmp_path / 'jobs'}"])
    SubmititLauncher(s.launcher).submit(operator.add, 2, 3)
    assert "#SBATCH --signal=USR2@60\n" in (tmp_path / "jobs" / "4242" / "4242_submission.sh").read_text()
    signal.signal(signal.SIGINT, handler)


def test_local_jobs_with_gpus_get_one_each(tmp_path, monkeypatch):
    """submitit's local executor would hand every job GPU 0; each job gets a GPU of its own while there are enough."""
    from lm.run import devices
    from lm.suite.launchers.submitit import SubmititLauncher

    monkeypatch.setattr(devices, "visible_gpus", lambda: ["0", "1"])
    launcher = SubmititLauncher(LauncherConfig(name="submitit", cluster="local", folder=str(tmp_path), max_jobs=0,
                                               parameters={"timeout_min": 5, "gpus_per_node": 1}))
    assert launcher.capacity == 2 and "1 GPU each" in launcher.describe()
    jobs = [launcher.submit(os.getenv, "CUDA_VISIBLE_DEVICES") for _ in range(2)]
    assert [j.gpus for j in jobs] == [(0,), (1,)]
    assert sorted(j.job.result() for j in jobs) == ["0", "1"]   # what each job's process saw


def test_with_srun_on_the_path_a_run_hears_nothing_of_lightnings_slurm_detection_unless_asked(tmp_path):
    """On a cluster's login node (srun on the PATH), Lightning would advise `srun python ...` on stderr in every run;
    Python's -W brings the advice back."""
    import subprocess
    import sys

    (tmp_path / "srun").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "srun").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    code = ("from lm.run import train; train.quiet(); "
            "from lightning_fabric.plugins.environments import SLURMEnvironment; SLURMEnvironment.detect()")
    quiet = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    asked = subprocess.run([sys.executable, "-W", "default", "-c", code], env=env, capture_output=True, text=True)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert "The `srun` command is available on your system but is not used" in asked.stderr
