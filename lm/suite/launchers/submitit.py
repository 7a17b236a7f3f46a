"""The suite's runs as submitit jobs, one job per run: on a SLURM cluster (`launcher=slurm`) or as processes on this
machine through submitit's local executor (`launcher=submitit_local`), the same code path either way.

Resources come from conf/launcher/*.yaml `parameters`, handed to submitit's AutoExecutor as they are: its shared
names (timeout_min, cpus_per_task, gpus_per_node, mem_gb, name, ...) apply on every cluster, `slurm_`-prefixed ones
(slurm_partition, slurm_account, slurm_additional_parameters, ...) on SLURM only. A job runs `lm.suite.worker.run_job`,
which logs to MLflow itself, so a job's run lands in the store exactly as a local one does. On SLURM, tested on a
real single-node one (tests/slurm): job states come from squeue where the cluster keeps no accounts, and the suite
stops a running job with a Ctrl-C to its step, which the run answers with a checkpoint.
"""
import fcntl
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from lm.settings.config import ConfigError
from lm.suite.launchers import Launch, LauncherConfig, register
from lm.suite.launchers.submitit_jobs import Failed, Job, one_line, queue_job_class, slurm_settle

CLUSTERS = ("slurm", "local", "debug")


def _holding(lock_path: str, fn, *args):
    """In a job on this machine: holds the suite's workers lock (shared) while it trains, as the local pool's
    workers do, so a new suite waits for the orphans of a killed one instead of training beside them."""
    with open(lock_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        return fn(*args)


def _in_slurm_job(fn, *args):
    """In a SLURM job: submitit's handler of SLURM's warning before the time limit (SIGUSR2, `--signal=USR2@90`)
    would requeue the job, or fail the run if the limit is near; the run answers that signal itself once it trains
    (lm.run.callbacks.StopOnSignal: step, checkpoint, KILLED), and before that SLURM's SIGTERM at the limit does the same."""
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    return fn(*args)


@register("submitit")
class SubmititLauncher:
    """One submitit job per run (the Launcher protocol, lm/suite/launchers/__init__.py)."""

    def __init__(self, cfg, workers_lock: str | None = None):
        self.cfg = cfg
        self.cluster, self.executor, self.parameters = self.check(cfg)
        self.workers_lock = workers_lock if self.cluster == "local" else None
        params = self.parameters
        self.gpus_per_job = int(params.get("gpus_per_node") or 0)
        cores = os.cpu_count() or 1
        self.threads = int(params.get("cpus_per_task") or 0)
        self.local_gpus: list[int] = []
        if self.cluster == "local":
            if self.gpus_per_job:  # submitit would give every local job GPU 0; share them out instead
                self.local_gpus = self._local_gpus(self.gpus_per_job)
            self.threads = self.threads or max(1, cores // (cfg.max_jobs or cores))
            fit = max(1, cores // self.threads)
            if self.local_gpus:
                fit = min(fit, len(self.local_gpus) // self.gpus_per_job)
            self.capacity = cfg.max_jobs or fit
        else:
            self.threads = self.threads or 1
            self.capacity = cfg.max_jobs or 32
        self.watcher = None
        if self.cluster == "slurm":
            self.executor._executor.job_class = queue_job_class()  # not exposed by AutoExecutor
            self.watcher = self.executor._executor.job_class.watcher
            self.watcher.probe()
        self.jobs: list[Job] = []
        self._lock = threading.Lock()
        self._old_sigint = None
        if self.cluster != "local" and threading.current_thread() is threading.main_thread():
            # Jobs on a cluster do not see the terminal's Ctrl-C: pass it on, so that they too finish their step,
            # save a checkpoint and end KILLED, while the suite stops launching (as with local workers).
            self._old_sigint = signal.signal(signal.SIGINT, self._on_sigint)

    @classmethod
    def start(cls, launch: Launch) -> "SubmititLauncher":
        """The launcher, its executor made from the launch's settings."""
        return cls(launch.config, launch.workers_lock)

    @classmethod
    def warm(cls) -> None:
        """Nothing: each job starts its own process, wherever the cluster puts it."""

    @staticmethod
    def check(cfg: LauncherConfig) -> tuple[str, Any, dict]:
        """Everything that can be checked before a run is touched; a ConfigError of one line if it cannot launch.
        Its cluster, executor and parameters, for the launcher itself."""
        cluster = cfg.cluster or None
        if cluster is not None and cluster not in CLUSTERS:
            raise ConfigError(f"launcher.cluster={cluster!r} must be one of {', '.join(CLUSTERS)} (or null: detected)")
        try:
            import submitit
        except ImportError:
            raise ConfigError("launcher=submitit needs the submitit package: pip install submitit") from None
        if cluster is None:
            cluster = "slurm" if shutil.which("sbatch") else "local"
        if cluster == "slurm" and not (shutil.which("sbatch") and shutil.which("srun")):
            raise ConfigError("launcher=slurm: SLURM's sbatch is not on this machine's PATH; launch from the cluster's "
                              "login node, or use launcher=local (worker processes here) or launcher=submitit_local")
        folder = Path(cfg.folder).expanduser().resolve()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"launcher.folder={cfg.folder}: cannot create it ({e.strerror})") from None
        params = {k: v for k, v in dict(cfg.parameters or {}).items() if v is not None}
        if cluster == "slurm" and params.get("timeout_min"):
            # submitit asks SLURM for its warning (SIGUSR2, which the run answers by stopping with a checkpoint) 90 s
            # before the limit, and SLURM, checking every 30 s, sends it up to 30 s earlier: with a limit of a minute
            # or two that is as the job starts, before anything can answer it, and the signal kills the job. So it
            # comes a minute after the start at the earliest; with a 1-minute limit, none (SLURM's kill at the limit).
            params.setdefault("slurm_signal_delay_s", min(90, max(0, int(params["timeout_min"]) * 60 - 60)))
        if cluster == "local":
            params.setdefault("timeout_min", 24 * 60)  # submitit's local default is 2 minutes
            if params.get("gpus_per_node"):
                SubmititLauncher._local_gpus(int(params["gpus_per_node"]))
        try:
            executor = submitit.AutoExecutor(folder=str(folder / "%j"), cluster=cluster)
            executor.update_parameters(**params)
        except Exception as e:
            raise ConfigError(f"launcher.parameters: {one_line(e)}") from None
        return cluster, executor, params

    @staticmethod
    def _local_gpus(per_job: int) -> list[int]:
        """This machine's GPUs, as the numbers submitit's local executor hands out in CUDA_VISIBLE_DEVICES."""
        from lm.run import devices

        names = devices.visible_gpus()
        if not all(n.isdigit() for n in names):
            raise ConfigError("launcher=submitit_local with GPUs needs CUDA_VISIBLE_DEVICES as numbers, not UUIDs")
        if len(names) < per_job:
            raise ConfigError(f"launcher.parameters.gpus_per_node={per_job}, but this machine has {len(names)} "
                              f"GPU{'s' * (len(names) != 1)}")
        return [int(n) for n in names]

    def interrupt(self) -> None:
        """The suite's Ctrl-C passed on to the jobs in progress, where this launcher's own handler did not already
        (local jobs: they get SIGTERM, which the run answers as a Ctrl-C)."""
        if self._old_sigint is None:
            self._cancel_running()

    def _on_sigint(self, signum, frame):
        self._cancel_running()
        handler = self._old_sigint
        if callable(handler):
            handler(signum, frame)
        elif handler != signal.SIG_IGN:
            raise KeyboardInterrupt

    def _cancel_running(self) -> None:
        live = [j for j in self.jobs if not j.done()]
        if self.cluster == "slurm":
            ids = [j.job.job_id for j in live]
            # A plain scancel, or a SIGTERM through it, ends the job's step at once (srun: "forcing job termination"),
            # the run without a step finished or a checkpoint. So the queued jobs go, and the running ones get a
            # Ctrl-C, which the run answers by finishing its step, saving a checkpoint and ending KILLED.
            for how in (["--state=PENDING"], ["--state=RUNNING", "--signal=INT"]) if ids else ():
                try:
                    subprocess.run(["scancel", *how, *ids], capture_output=True, timeout=60)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            return
        for j in live:
            try:
                process = getattr(j.job, "_process", None)
                if process is not None:
                    process.send_signal(signal.SIGTERM)  # a local job's controller passes it on to the run
                else:
                    j.job.cancel(check=False)
            except Exception:
                pass

    def submit(self, fn, *args):
        """Submits one job; a submission that fails (sbatch refused it) becomes a failed job with the reason."""
        with self._lock:
            gpus: tuple[int, ...] = ()
            try:
                if self.local_gpus:
                    busy = {g for j in self.jobs if not j.done() for g in j.gpus}
                    free = [g for g in self.local_gpus if g not in busy]
                    gpus = tuple(free[:self.gpus_per_job]) if len(free) >= self.gpus_per_job else \
                        tuple(self.local_gpus[:self.gpus_per_job])
                    self.executor._executor.update_parameters(visible_gpus=gpus)  # not exposed by AutoExecutor
                if self.workers_lock:
                    fn, args = _holding, (self.workers_lock, fn, *args)
                if self.cluster == "slurm":
                    fn, args = _in_slurm_job, (fn, *args)
                job = Job(self._submit(fn, *args), gpus, slurm=self.cluster == "slurm")
            except Exception as e:
                return Failed(f"could not submit the job to {self.cluster}: {one_line(e)}")
            self.jobs.append(job)
            return job

    def _submit(self, fn, *args):
        if self.cluster != "local" or threading.current_thread() is not threading.main_thread():
            return self.executor.submit(fn, *args)
        # A local job's controller would answer the terminal's Ctrl-C by killing the run a second later. Started
        # with SIGINT ignored, it leaves Ctrl-C to the run, which stops cleanly after its step (as in a local
        # worker), and to the suite, which stops launching.
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return self.executor.submit(fn, *args)
        finally:
            signal.signal(signal.SIGINT, old)

    def describe(self) -> str:
        p = self.parameters
        each = [f"{self.threads} CPU{'s' * (self.threads > 1)}"]
        if self.gpus_per_job:
            each.append(f"{self.gpus_per_job} GPU{'s' * (self.gpus_per_job > 1)}")
        if p.get("mem_gb"):
            each.append(f"{p['mem_gb']} GB")
        where = f"partition {p['slurm_partition']}" if p.get("slurm_partition") else self.cluster
        line = (f"submitit ({where}): up to {self.capacity} jobs at once, {', '.join(each)} each, "
                f"{p.get('timeout_min', '?')} min limit; logs in {Path(self.cfg.folder).expanduser().resolve()}")
        if self.watcher and not self.watcher.accounting:  # said once, here, rather than by submitit on every poll
            line += f"; job states from squeue (sacct: {self.watcher.why})"
        return line

    def shutdown(self, cancel: bool = False) -> None:
        """With cancel, stops the jobs still running: SIGINT to a running SLURM job's step (a queued one is
        cancelled), or SIGTERM to a local job, which the run answers by finishing its step, saving a checkpoint and
        ending KILLED; the next suite resumes it."""
        if self._old_sigint is not None:
            signal.signal(signal.SIGINT, self._old_sigint)
            self._old_sigint = None
        if cancel:
            self._cancel_running()
        if self.cluster == "slurm":  # the suite returns once the jobs whose runs have returned have ended
            slurm_settle([str(j.job.job_id) for j in self.jobs if j.done()])
