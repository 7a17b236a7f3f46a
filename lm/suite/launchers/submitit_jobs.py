"""A submitit job as the suite sees it: done() and result(), its error in one line, and, on SLURM, how the cluster
ended it (sacct, or squeue where the cluster keeps no accounts)."""
import os
import re
import subprocess
import time

from lm.suite.launchers import WorkerDied


def one_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__



class Failed:
    """A job that could not even be submitted: done at once, and its result says why."""

    def __init__(self, reason: str):
        self.reason = reason

    def done(self) -> bool:
        return True

    def result(self):
        raise RuntimeError(self.reason)


# How SLURM says a job was ended from outside; the job's own log ends on whichever of srun's lines came last
# ("forcing job termination", "Job step aborted: Waiting up to 32 seconds…"), so the state is the word to report.
ENDINGS = ("CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "DEADLINE", "BOOT_FAIL")


def _slurm_ending(job_id: str, patience_s: float = 30.0) -> str:
    """SLURM's state for an ended job where it is one of ENDINGS, else "": from sacct where the cluster keeps
    accounts, else from squeue (which lists an ended job for MinJobAge); waits while the job is COMPLETING."""
    deadline = time.monotonic() + patience_s
    while True:
        state = ""
        for cmd in (["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State"],
                    ["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T"]):
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                continue
            state = out.stdout.split()[0] if out.returncode == 0 and out.stdout.split() else ""
            if state:
                break
        if state != "COMPLETING" or time.monotonic() > deadline:
            return state if state in ENDINGS else ""
        time.sleep(1)


def slurm_settle(ids: list[str], patience_s: float = 30.0) -> None:
    """Returns once SLURM lists none of these jobs as pending, running or completing, or after patience_s: a job
    whose run has returned its result stays COMPLETING while its processes and its epilog end."""
    deadline = time.monotonic() + patience_s
    while ids and time.monotonic() < deadline:
        try:
            out = subprocess.run(["squeue", "-h", "-t", "PENDING,RUNNING,COMPLETING", "-j", ",".join(ids), "-o", "%i"],
                                 capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return
        if out.returncode != 0 or not out.stdout.split():  # an id SLURM has forgotten is an error: gone too
            return
        time.sleep(0.5)


class Job:
    """A submitit job as the suite's dispatcher sees it: done() and result(), the error in one line (with SLURM's
    state first, where SLURM ended the job)."""

    def __init__(self, job, gpus: tuple[int, ...] = (), slurm: bool = False):
        self.job, self.gpus, self.slurm = job, gpus, slurm

    def done(self) -> bool:
        try:
            return self.job.done()
        except Exception:  # the scheduler did not answer this time; ask again on the next poll
            return False

    def result(self):
        try:
            return self.job.result()
        except Exception as e:
            log = getattr(self.job.paths, "stderr", None)
            ending = _slurm_ending(str(self.job.job_id)) if self.slurm else ""
            limit = _memory_limit(ending, log) if self.slurm else ""
            if limit:  # as a local worker's death: one line, this run FAILED, the suite goes on
                raise WorkerDied(f"job {self.job.job_id} killed by SLURM at its memory limit ({limit}): "
                                 f"out of memory" + (f" (log: {log})" if log else "")) from None
            raise RuntimeError(f"job {self.job.job_id}{f' {ending}' if ending else ''}: {_last_error(e)}"
                               + (f" (log: {log})" if log else "")) from None


# How slurmstepd says, in the job's log, that it killed a step at the job's memory limit: where a cluster samples
# memory (JobAcctGatherParams=OverMemoryKill, as tests/slurm/cluster.sh sets up) the job then ends FAILED, not
# OUT_OF_MEMORY, which only a cgroup's out-of-memory killer sets (it too leaves a line: "oom-kill event").
MEMORY_LINES = re.compile(r"exceeded (job )?memory limit|oom[-_ ]kill event", re.IGNORECASE)


def _memory_limit(ending: str, log) -> str:
    """How SLURM says it killed the job at its memory limit ("OUT_OF_MEMORY", or slurmstepd's line in the job's
    log), or "" where it did not."""
    if ending == "OUT_OF_MEMORY":
        return ending
    try:
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 65536))  # slurmstepd's lines come last
            found = MEMORY_LINES.search(f.read().decode(errors="replace"))
    except (OSError, TypeError):
        return ""
    return found[0].lower() if found else ""


def _last_error(e: BaseException) -> str:
    """submitit's errors carry the job's whole traceback between two rules of dashes; its last line names the error."""
    text = str(e)
    parts = text.split("----------------------")
    lines = [ln.strip() for ln in (parts[1] if len(parts) >= 3 else text).splitlines() if ln.strip()]
    for ln in reversed(lines):
        if not ln.startswith(("File ", "^", "~")) and ("Error" in ln or "Exception" in ln or ":" in ln):
            return ln[:500]
    return lines[-1][:500] if lines else type(e).__name__


def queue_job_class():
    """submitit's SlurmJob, with job states from squeue where the cluster keeps no accounts (no sacct database):
    submitit would ask sacct on every poll and warn each time."""
    from submitit.slurm.slurm import SlurmInfoWatcher, SlurmJob

    class QueueWatcher(SlurmInfoWatcher):
        """sacct where it answers; else squeue, which holds a job until MinJobAge (5 min by default) after it ends,
        so a job it no longer lists has ended (its result file, or its absence, says how)."""

        def __init__(self):
            super().__init__(delay_s=30)
            self.accounting: bool | None = None  # unknown until probed
            self.why = ""

        def probe(self) -> None:
            try:
                out = subprocess.run(["sacct", "-n", "-X", "-o", "JobID", "-S", "now"], capture_output=True,
                                     text=True, timeout=30)
                self.accounting, self.why = out.returncode == 0, one_line(Exception(out.stderr or out.stdout))
            except (OSError, subprocess.TimeoutExpired) as e:
                self.accounting, self.why = False, one_line(e)

        def update(self) -> None:
            if self.accounting is None:
                self.probe()
            if self.accounting:
                return super().update()
            to_check = {x.split("_")[0] for x in self._registered - self._finished}
            if not to_check:
                return
            self._num_calls += 1
            try:
                out = subprocess.run(["squeue", "-h", "--me", "-t", "all", "-o", "%i|%T|%N"], capture_output=True,
                                     text=True, timeout=30, check=True).stdout
            except (OSError, subprocess.SubprocessError):
                return  # the controller did not answer this time; ask again on the next poll
            listed = {}
            for line in out.splitlines():
                job_id, _, rest = line.partition("|")
                state, _, nodes = rest.partition("|")
                listed[job_id] = {"JobID": job_id, "State": state, "NodeList": nodes}
            for job_id in to_check:
                self._info_dict[job_id] = listed.get(job_id, {"JobID": job_id, "State": "ENDED"})
            self._last_status_check = time.time()
            self._finished |= {j for j in self._registered if self.is_done(j, mode="cache")}

    class QueueJob(SlurmJob):
        watcher = QueueWatcher()

    return QueueJob
