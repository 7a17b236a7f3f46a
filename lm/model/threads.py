"""How many torch threads a command's process computes on: one for models as small as the lessons', every core the
process may use for larger ones; `runtime.threads=N` (train, sweeps, the suite) or `threads=N` (sample, heads) asks
for N.

Two OpenMP threads on two cores wait for each other at the end of every kernel, and the lessons' kernels are short:
when another process is busy on one of the cores, even at nice 19, the thread that shares it holds up the other at
every kernel, and a step takes many times as long as on one thread (docs/speed.md, "A machine that is not idle").
One thread loses little on an idle machine for models this small, and nothing to a busy core.
"""
import contextlib
import os
import sys

# A training step of fewer FLOPs than this (train_flops: the lessons' model 1.5 GFLOP, every exercise's variants up
# to 15.8, lesson 002's doubled model; profile=gpu 97) runs on one thread; a larger one on every core the process
# may use, whose kernels are long enough for the threads to share.
ONE_THREAD_BELOW = 20e9
# Set to anything: each command says on stderr how many torch threads it computes on (the tests read it).
SHOW = "TINYGPT_SHOW_THREADS"


def cores() -> int:
    """The cores this process may run on (its affinity: taskset, a container's cpuset, a SLURM job's CPUs), not
    the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def automatic(flops_per_step: float) -> int:
    """The threads for a model whose training step takes this many FLOPs: one below ONE_THREAD_BELOW, else the
    process's cores."""
    return 1 if flops_per_step < ONE_THREAD_BELOW else cores()


def use(threads: int, what: str) -> int:
    """torch set to compute on `threads` threads, and as many inter-op threads (which torch lets a process set once,
    before any inter-op work: a suite's worker keeps its first run's); returns the count. `what` names the
    process for SHOW's line."""
    import torch  # the commands check their options before torch loads

    torch.set_num_threads(threads)
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(threads)
    if os.environ.get(SHOW):
        print(f"torch threads: {torch.get_num_threads()} ({what}; {cores()} cores)", file=sys.stderr, flush=True)
    return threads
