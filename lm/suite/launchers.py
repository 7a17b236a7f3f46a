"""Where a suite's runs execute: worker processes on this machine, or jobs through submitit."""
import fcntl
import multiprocessing as mp
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor


def plan_workers(jobs: int, workers: int = 0, threads: int = 0, gpus: int = 0) -> tuple[int, int]:
    """Workers × threads for this machine: one worker per GPU when there are GPUs; else one single-threaded run per
    core, side by side, and never more threads than cores unless asked. Measured by `make bench` (its suite rows:
    base-config runs through this pool and the suite's own job function, blocks alternating) on the 2-core machine
    the README names: 2 workers × 1 thread trained 676 runs/hour against 525 for 1 worker × 2 threads, runs one
    after another (1.29×; 1.39× and 1.60× in other runs). These models are too small to keep two threads busy, and two
    OpenMP threads that wait on each other lose far more than that whenever the machine is shared. One thread also
    keeps a run's floats the same whatever the worker count (the thread count changes them, 1e-4 after 100 steps)."""
    threads = threads or 1
    slots = gpus or (os.cpu_count() or 1) // threads
    return workers or max(1, min(jobs, slots)), threads


_slot = None


def _init_worker(threads: int, workers_lock: str, parent: int, counter) -> None:
    global _slot
    import torch

    torch.set_num_threads(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the run in progress, which stops cleanly
    # Shared while this worker lives: a new suite waits on it, so an orphan of a killed one can never
    # train beside it.
    lock = open(workers_lock, "a+")
    fcntl.flock(lock, fcntl.LOCK_SH)
    _init_worker.lock = lock
    with counter.get_lock():
        counter.value += 1
        _slot = counter.value

    def watch():  # a worker never outlives its suite, even one killed with SIGKILL
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def worker_slot() -> int:
    return _slot or 0


class LocalPool:
    """Worker processes on this machine, each with its share of the cores."""

    def __init__(self, workers: int, threads: int, workers_lock: str):
        self.capacity, self.threads = workers, threads
        ctx = mp.get_context("spawn")
        self.pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                        initargs=(threads, workers_lock, os.getpid(), ctx.Value("i", 0)))

    def submit(self, fn, *args):
        return self.pool.submit(fn, *args)

    def describe(self) -> str:
        return f"{self.capacity} worker{'s' * (self.capacity > 1)} × {self.threads} thread{'s' * (self.threads > 1)}"

    def shutdown(self, cancel: bool = False) -> None:
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)
