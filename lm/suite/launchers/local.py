"""The local launcher (`launcher=local`, the default): worker processes on this machine, each with its share of the
cores or a GPU of its own."""
import fcntl
import multiprocessing as mp
import os
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver

from lm.model.threads import cores
from lm.model.threads import use as use_threads
from lm.run import devices
from lm.suite.launchers import Launch, LauncherConfig, WorkerDied, register


def plan_workers(jobs: int, workers: int = 0, threads: int = 0, gpus: int = 0) -> tuple[int, int]:
    """Workers × threads for this machine: one worker per GPU when there are GPUs; else one single-threaded run per
    core, side by side, and never more threads than cores unless asked. Measured by `make bench` (its suite rows:
    base-config runs through this pool and the suite's own job function, blocks alternating) on the 2-core machine
    the README names: 2 workers × 1 thread trained 676 runs/hour against 525 for 1 worker × 2 threads, runs one
    after another (1.29×; 1.39× and 1.60× in other runs). These models are too small to keep two threads busy, and two
    OpenMP threads that wait on each other lose far more than that whenever the machine is shared. One thread also
    keeps a run's floats the same whatever the worker count (the thread count changes them, 1e-4 after 100 steps)."""
    threads = threads or 1
    slots = gpus or cores() // threads
    return workers or max(1, min(jobs, slots)), threads


_slot = None


def _context() -> mp.context.BaseContext:
    """Workers forked from a fork server that imported what a run needs (lm/suite/preload.py) once for all of them:
    a suite's 2 workers had imported it each, about 6 s of CPU apiece (a 7-run quick suite: 39 and 33 CPU-s against 41
    and 45 spawned, docs/speed.md). Spawned, each importing it all itself, where there is no fork server (Windows)."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["lm.suite.preload"])
    return ctx


def _init_worker(threads: int, workers_lock: str, slot: int, environ: dict[str, str], cwd: str, alive) -> None:
    global _slot
    # The suite's environment and folder as they are now: a fork server keeps those it started with, and a notebook
    # may have changed them since its first suite.
    if os.environ != environ:
        os.environ.clear()
        os.environ.update(environ)
    os.chdir(cwd)
    from lm.suite import preload  # noqa: F401  (imported already where the fork server preloaded it)
    from lm.run.callbacks import StopOnSignal

    use_threads(threads, "suite worker")
    # Ctrl-C is for the run in progress, which stops cleanly at its step; one that comes before a run is under way
    # (the worker's start-up, the run's set-up) is kept for it, which stops at its first step.
    signal.signal(signal.SIGINT, StopOnSignal.remember)
    # Shared while this worker lives: a new suite waits on it, so an orphan of a killed one can never
    # train beside it.
    lock = open(workers_lock, "a+")
    fcntl.flock(lock, fcntl.LOCK_SH)
    _init_worker.lock = lock
    _slot = slot

    def watch():  # a worker never outlives its suite, even one killed with SIGKILL
        # `alive` is the read end of a pipe whose one write end the suite holds: it reads EOF once the suite is gone.
        # (Not the parent's pid: a fork server is the parent, and it lives as long as its workers do.)
        try:
            alive.recv()
        except (EOFError, OSError):
            pass
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def worker_slot() -> int:
    return _slot or 0


def death(exitcode: int | None) -> str:
    """How a worker process ended, in one line: SIGKILL is what the kernel's out-of-memory killer sends."""
    if exitcode is None or exitcode >= 0:
        return f"worker exited with status {exitcode} in the middle of a run"
    name = signal.Signals(-exitcode).name if -exitcode in signal.valid_signals() else "?"
    return f"worker killed by signal {-exitcode} ({name})" + (": out of memory?" if -exitcode == signal.SIGKILL else "")


class _Work:
    """A job on one worker: done() and result(), a dead worker's BrokenProcessPool told as WorkerDied."""

    def __init__(self, future: Future, process):
        self.future, self.process = future, process

    def done(self) -> bool:
        return self.future.done()

    def result(self):
        try:
            return self.future.result()
        except BrokenProcessPool:
            self.process.join(5)
            raise WorkerDied(death(self.process.exitcode)) from None


@register("local")
class LocalPool:
    """Worker processes on this machine, each with its share of the cores. Each worker is a pool of its own (a
    ProcessPoolExecutor of one process): when one dies, concurrent.futures fails every job of its pool
    (BrokenProcessPool) and terminates the pool's other processes, so a pool of one loses one run, and the others'
    runs go on. A dead worker's pool is started again for the next job."""

    def __init__(self, workers: int, threads: int, workers_lock: str):
        self.capacity, self.threads = workers, threads
        self._ctx, self._lock = _context(), workers_lock
        self._alive, self._alive_w = self._ctx.Pipe(duplex=False)   # the workers' `alive`: this suite's end, kept
        self._pools = {slot: self._start(slot) for slot in range(1, workers + 1)}
        self._work: dict[int, list[_Work]] = {slot: [] for slot in self._pools}

    @classmethod
    def check(cls, cfg: LauncherConfig) -> None:
        """Nothing to check: this machine is always there."""

    @classmethod
    def warm(cls) -> None:
        """The fork server started, so that it imports what a run needs beside the suite's own imports and store:
        otherwise the first run waits for it (a new store, 2 workers: the second worker's first run began 4.6 s
        after the first's, one core idle meanwhile). A suite with nothing to run would pay those imports for
        nothing, which is why the suite calls this only on a new store."""
        if _context().get_start_method() == "forkserver":
            forkserver.ensure_running()

    @classmethod
    def start(cls, launch: Launch) -> "LocalPool":
        """A pool for the launch's runs: workers × threads by plan_workers, with the GPUs it shares out."""
        gpus = devices.share_gpus(launch.accelerator)
        workers, threads = plan_workers(launch.runs, launch.workers, launch.threads, len(gpus))
        return cls(workers, threads, launch.workers_lock)

    def _start(self, slot: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(1, mp_context=self._ctx, initializer=_init_worker,
                                   initargs=(self.threads, self._lock, slot, dict(os.environ), os.getcwd(),
                                             self._alive))

    def submit(self, fn, *args) -> _Work:
        for slot, work in self._work.items():
            work[:] = [w for w in work if not w.done()]
        slot = min(self._pools, key=lambda s: len(self._work[s]))  # an idle worker, else the least queued
        pool = self._pools[slot]
        if pool._broken:  # its worker died: a new one for this slot (the old pool's threads are ended)
            pool.shutdown(wait=False)
            pool = self._pools[slot] = self._start(slot)
        future = pool.submit(fn, *args)
        # The pool's process, started by this submit: its exit code says how it died (concurrent.futures says not).
        (process,) = pool._processes.values()
        self._work[slot].append(_Work(future, process))
        return self._work[slot][-1]

    def describe(self) -> str:
        return f"{self.capacity} worker{'s' * (self.capacity > 1)} × {self.threads} thread{'s' * (self.threads > 1)}"

    def interrupt(self) -> None:
        """The suite's Ctrl-C passed on to the runs in progress, which finish their step and end KILLED: a terminal's
        Ctrl-C reaches them too, a `kill -INT` to the suite alone does not (they would have trained to the end)."""
        for work in self._work.values():
            for w in work:
                if not w.done() and w.process.is_alive():
                    os.kill(w.process.pid, signal.SIGINT)

    def shutdown(self, cancel: bool = False) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=not cancel, cancel_futures=cancel)
