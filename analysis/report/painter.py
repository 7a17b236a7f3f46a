"""The report's figures as work for other processes: a Plot names a drawing function of figures.py (beside it) and its
arguments (pandas tables, lists and numbers), and the painter's worker processes draw it and save it as PNG while
the report goes on.

Drawing in the report's own process would be its largest cost, building and saving the figures most of its time
(docs/notebook.md). The report's own process never imports matplotlib or
seaborn: its forked workers do, as the report starts them, once it knows there is something to draw. Where fork is
not the safe default (macOS, Windows), or with workers=0, the figures are drawn in the process, one after another.
"""
import multiprocessing
import os
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Plot:
    """A figure to draw: `draw` is the name of a function of figures.py that returns a matplotlib Figure."""
    draw: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


def plot(draw: str, *args, **kwargs) -> Plot:
    return Plot(draw, args, kwargs)


def _figures():
    # The one place matplotlib and seaborn are imported: in a worker, or in a process that has none.
    from analysis.report import figures
    return figures


def paint(p: Plot, path: str, svg: bool = False) -> None:
    """Draws the plot and saves it at path (a PNG), and with svg as an SVG beside it."""
    figures = _figures()
    figures.save(getattr(figures, p.draw)(*p.args, **p.kwargs), path, svg)


def default_workers() -> int:
    """One worker per core the process may use but the one the report's own process keeps while it reads and judges
    (on the full store its work and the drawing take about as much CPU each), at least one and at most four. On two
    cores that is one: two workers beside the report's own process made the full report slower idle, and a third
    process on the core another program leaves (docs/speed.md). The workers run at a lower priority (NICE)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores - 1))


# How much lower the workers' priority is than the report's: low enough that the report's own reading and judging
# keep a core, which made the whole report faster on 2 cores than workers at its own priority (docs/notebook.md).
NICE = 5


def _start_worker():
    os.nice(NICE)
    _figures()


class Painter:
    """Worker processes that draw and save figures; `wait` returns once all are written (or raises the first error)
    and stops the workers, which the next figure starts again."""

    def __init__(self, workers: int | None = None):
        self.workers = workers if workers is not None else default_workers()
        self._pool: ProcessPoolExecutor | None = None
        self._jobs: list[Future] = []

    @property
    def forks(self) -> bool:
        return self.workers >= 1 and sys.platform == "linux"

    def start(self) -> None:
        """The workers forked now, each importing matplotlib and seaborn as it starts."""
        if self._pool is None and self.forks:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_start_worker)
            self._pool.submit(int)  # the first job forks every worker

    def paint(self, p: Plot, path, svg: bool = False) -> None:
        if not self.forks:
            return paint(p, str(path), svg)
        self.start()
        self._jobs.append(self._pool.submit(paint, p, str(path), svg))

    def wait(self) -> None:
        jobs, self._jobs = self._jobs, []
        try:
            for job in jobs:
                job.result()
        finally:
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
                self._pool = None


# The report's painter: started by the report once it has runs to draw, or by its first figure.
PAINTER = Painter()
