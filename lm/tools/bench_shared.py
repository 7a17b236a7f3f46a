"""`make bench ARGS="only=shared"`: each command a user runs, timed on a machine that is not idle. Each is a process
of its own, run alone and beside a process busy on one core (a nice-19 spinner in a session of its own, as a
browser, an editor or a second study would be), in pairs, alone then beside it, so that each pair shares whatever
else the machine does; the ratio busy/idle is the median of the pairs'.

The commands: a `make train` of a few steps, `make sample` from it, a quick suite of one run, and `make report` on
that suite's store, all on a scratch store; and what the default threads cost an idle machine, `make train` alone
at its default against the same at every core's threads. The spinner ends when the bench does, however it ends:
it is stopped after each timing, and it stops itself once the bench's process is gone (a SIGKILL'd bench
included).
"""
import os
import signal
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator, NamedTuple

from lm.tools.bench_process import load, progress, timed

# The goal for each ratio, busy over idle.
GOAL = 1.3
# The goal for the price of the default threads on an idle machine: `make train` at its default against the same at
# every core's threads (the default before thread counts were chosen for a busy machine).
IDLE_GOAL = 1.05
# A busy loop that ends once its parent, the bench, is gone (it is then another process's child).
SPIN = "import os, sys\nparent = int(sys.argv[1])\nwhile os.getppid() == parent:\n    pass\n"


class Command(NamedTuple):
    what: str           # the row's name
    args: list[str]     # after `python`


def commands(scratch: str, quick: bool) -> list[Command]:
    """The commands in the order they run: each reads what those before it wrote."""
    steps = ["train.steps=20", "measure=none", "eval.every=20", "eval.val_batches=4"] if quick else ["train.steps=60"]
    report = os.path.join(scratch, "report")
    return [
        Command(f"make train ({' '.join(steps)})", ["-m", "lm.commands.train", *steps, "runtime.progress=false"]),
        Command("make sample (its newest run, 400 characters)", ["-m", "lm.commands.sample"]),
        Command("make ablations (quick=true ablations=[baseline], one run)",
                ["-m", "lm.commands.suite", "quick=true", "ablations=[baseline]"]),
        Command("make report (quick=true ablations=baseline)",
                ["-m", "analysis.report", "quick=true", "ablations=baseline", "log=false", f"out={report}"]),
    ]


@contextmanager
def busy_core() -> Iterator[subprocess.Popen]:
    """A process busy on one core while the block runs: nice 19, in a session of its own (the kernel shares the CPU
    between sessions before it weighs their priorities), killed when the block ends, however it ends."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN, str(os.getpid())], start_new_session=True,
                               preexec_fn=lambda: os.nice(19), stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.2)   # under way before the command starts
        yield spinner
    finally:
        spinner.kill()
        spinner.wait()


def shared(table, scratch: str, quick: bool, pairs: int) -> None:
    """The commands' rows: alone and beside a busy core, `pairs` pairs each (alone, busy; every command once before
    the next pair), the median seconds of each and the median of the pairs' ratios."""
    env = {**os.environ, "TINYGPT_STORE": os.path.join(scratch, "shared")}
    env.pop("MLFLOW_TRACKING_URI", None)
    todo = commands(scratch, quick)
    idle: dict[str, list[float]] = {c.what: [] for c in todo}
    busy: dict[str, list[float]] = {c.what: [] for c in todo}
    train = todo[0]
    cores = len(os.sched_getaffinity(0))
    every = [*train.args, f"runtime.threads={cores}"]   # the train command at every core's threads, idle
    wide: list[float] = []
    start = load()
    # A Ctrl-C or a SIGTERM ends the timing under way and leaves through busy_core's finally.
    old = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with progress(pairs * (2 * len(todo) + 1), "commands alone and beside a busy core") as bar:
            for _ in range(pairs):
                wide.append(timed(every, env, 0).seconds)
                bar.update()
                for c in todo:
                    idle[c.what].append(timed(c.args, env, 0).seconds)
                    bar.update()
                    with busy_core():
                        busy[c.what].append(timed(c.args, env, 0).seconds)
                    bar.update()
    finally:
        signal.signal(signal.SIGTERM, old)
    table.section(f"a machine that is not idle: each command alone, then beside a nice-19 process busy on one core "
                  f"(a session of its own), {pairs} pair(s) interleaved, medians; {os.cpu_count()} cores; load "
                  f"average {start} at the start, {load()} at the end")
    for c in todo:
        ratios = sorted(b / a for a, b in zip(idle[c.what], busy[c.what]))
        ratio = statistics.median(ratios)
        seconds = f"{statistics.median(idle[c.what]):.1f} s; {statistics.median(busy[c.what]):.1f} s"
        table.add(c.what, seconds, f"alone; beside a busy core: ratio {ratio:.2f} (goal ≤ {GOAL}), "
                                   f"pairs {ratios[0]:.2f}–{ratios[-1]:.2f}")
    ratios = sorted(a / b for a, b in zip(idle[train.what], wide))
    table.add(f"{train.what}, idle: its default threads against {cores}",
              f"{statistics.median(idle[train.what]):.1f} s; {statistics.median(wide):.1f} s",
              f"alone, at each: ratio {statistics.median(ratios):.2f} (goal ≤ {IDLE_GOAL}), pairs "
              f"{ratios[0]:.2f}–{ratios[-1]:.2f}")
