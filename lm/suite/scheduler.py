"""The suite's scheduler: the pending jobs run on a launcher, longest first, a source before what reads it, a twin
copied from its leader once the leader has finished; a line for each run that ends, and a Ctrl-C acted on."""
import time
from typing import Callable

from tqdm import tqdm

from lm.suite.bookkeeping import open_run
from lm.suite.interrupt import STOPPING, CtrlC
from lm.suite.jobs import Job, State
from lm.suite.launchers import WorkerDied
from lm.suite.worker import run_job


class Scheduler:
    """The jobs of one suite as they run: those pending, those on the launcher (by their future), and the work
    done of all (in Job.cost's units) for the ETA. say: where the line of each finished run goes (above the bar)."""

    def __init__(self, jobs: list[Job], launcher, bar, store, ctrl_c: CtrlC, say: Callable[[str], None]):
        self.jobs, self.launcher, self.bar, self.store, self.ctrl_c, self.say = jobs, launcher, bar, store, ctrl_c, say
        self.pending = sorted((j for j in jobs if j.state == State.PENDING), key=lambda j: -j.cost)
        self.sources = {(j.spec.exercise, j.spec.seed): j for j in jobs}
        self.running: dict = {}
        self.interrupted = False
        self.finished, self.total = 0, len(self.pending)
        self.work_done, self.work_total = 0.0, sum(j.cost for j in self.pending)
        self.start = time.time()

    def run(self) -> bool:
        """Every pending job run; False if interrupted."""
        while self.pending or self.running:
            if not self.interrupted and self._stop_asked():
                self.interrupted = True
                self.pending = []
                self.launcher.interrupt()
                self.say(STOPPING)
            if not self.interrupted:
                self._copy_twins()
                self._submit()
            self._collect()
            self.bar.set_description(f"{self.finished} of {self.total} runs done, {len(self.running)} running",
                                     refresh=False)
            if self.interrupted and not self.running:
                break
            time.sleep(0.1)
        return not self.interrupted

    def _stop_asked(self) -> bool:
        """A Ctrl-C to the suite, or to one of its runs (a terminal's goes to every process of the suite)."""
        return bool(self.ctrl_c.count) or any(j.result.get("signal") == "SIGINT" for j in self.jobs)

    def _copy_twins(self) -> None:
        """Each twin whose leader has finished, copied here, at once."""
        for job in [j for j in self.pending if self._ready(j) and j.twin is not None]:
            self.pending.remove(job)
            job.result = copy_job(job, self.store)
            job.state = State.DONE if job.result["status"] == "FINISHED" else State.FAILED
            self._report(job)

    def _submit(self) -> None:
        """As many ready jobs as the launcher has room for, submitted; a job skipped on the way leaves the queue."""
        for job in [j for j in self.pending if len(self.running) < self.launcher.capacity and self._ready(j)
                    and j.twin is None]:
            if len(self.running) >= self.launcher.capacity:
                break
            self.pending.remove(job)
            src = self._source(job)
            future = self.launcher.submit(run_job, job.cfg, open_run(self.store, job), src and src.run_id)
            self.running[future] = job
        self.pending = [j for j in self.pending if j.state == State.PENDING]

    def _collect(self) -> None:
        """Each run the launcher has finished, its result taken; a crash in the worker, or its death, is a FAILED
        run and the suite goes on."""
        for fut in [f for f in self.running if f.done()]:
            job = self.running.pop(fut)
            try:
                job.result = fut.result()
            except Exception as e:
                reason = str(e) if isinstance(e, WorkerDied) else f"{type(e).__name__}: {e}"
                job.result = {"status": "FAILED", "reason": reason}
                if self.store.client.get_run(job.run_id).info.status == "RUNNING":  # a job that never reached it
                    self.store.end_run(job.run_id, "FAILED", job.result["reason"])
            job.state = {"FINISHED": State.DONE, "KILLED": State.KILLED}.get(job.result["status"], State.FAILED)
            self._advance(job)
            self._report(job)

    def _source(self, job: Job) -> Job | None:
        """The job whose models this one reads (init_from), at its seed."""
        return self.sources.get((job.spec.init_from, job.spec.seed))

    def _ready(self, job: Job) -> bool:
        """Whether the job can start now: its twin's leader finished, or its source did. A job whose leader gave
        up trains for itself; one whose source gave up is SKIPPED (its run FAILED with that reason as the suite
        ends)."""
        if job.twin is not None and job.twin.state.gave_up:
            job.twin = None  # then it trains, and shows for itself what became of that config
        if job.twin is not None:
            return job.twin.state.succeeded
        if not job.spec.init_from:
            return True
        src = self._source(job)
        if src.state.gave_up:
            job.state = State.SKIPPED
            job.result = {"reason": f"{job.spec.init_from} seed {job.spec.seed} did not finish"}
            open_run(self.store, job)
            self._advance(job)
            return False
        return src.state.succeeded

    def _advance(self, job: Job) -> None:
        self.work_done += job.cost
        self.bar.update(job.cost)

    def _report(self, job: Job) -> None:
        """The line of a finished run: how it ended, in what time, its loss, and the suite's time left."""
        self.finished += 1
        r = job.result
        what = f"val_loss {r['val_loss']:.3f}" if "val_loss" in r else r.get("reason", "")
        how = f"copied from {job.twin.experiment}/{job.twin.spec.name} (the same config)" \
            if job.twin and r["status"] == "FINISHED" else ""
        left = (time.time() - self.start) * (self.work_total / self.work_done - 1) if self.work_done else None
        eta = f" (suite: about {left / 60:.1f} min left)" if left is not None else ""
        self.say(f"[{self.finished}/{self.total}] {job.experiment}/{job.spec.name}: {how or r['status'].lower()} in "
                 f"{r.get('seconds', 0):.0f}s, {what}{eta}")


def dispatch(jobs: list[Job], launcher, bar, store, ctrl_c: CtrlC, say: Callable[[str], None] = tqdm.write) -> bool:
    """Runs the pending jobs, longest first, a source before what reads it, a twin after its leader (and copies
    the leader's results). False if interrupted: by a Ctrl-C to the suite, or to one of its runs (a terminal's
    Ctrl-C goes to every process of the suite: a run stopped by it stops the suite, even if the suite's own process
    missed it). say: where the line of each finished run goes (above the bar)."""
    return Scheduler(jobs, launcher, bar, store, ctrl_c, say).run()


def copy_job(job: Job, store) -> dict:
    """In the suite's own process: a twin's results copied from its leader's run, in a second or so."""
    from lm.run import train

    t = time.time()
    try:
        result = train.copy(job.cfg, store, job.twin.run_id, open_run(store, job))
    except Exception as e:  # as a crash in a worker: this run is FAILED, the suite goes on
        result = {"status": "FAILED", "reason": f"{type(e).__name__}: {e}"}
        store.end_run(job.run_id, "FAILED", result["reason"])
    return {**result, "seconds": time.time() - t}
