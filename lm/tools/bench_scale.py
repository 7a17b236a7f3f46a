"""`make bench`'s scale rows: the bookkeeping on stores of 100, 1,000 and 10,000 finished runs (lm/tools/scale_store.py,
built once and kept in ~/.cache/tinygpt/scale), and how each grows from one size to the next.

For each size, on a fresh copy of the store, in this process (the imports, the same at every size, left out):
a bare reading of every run (lm.tracking.every_run, MLflow's search_runs page by page: the floor of reading them
once), the suite that trains nothing, `make report`'s report, `make heads EXERCISE=...`'s discovery of the runs,
and `runs.table()`.
"""
import contextlib
import io
import os
import time
from pathlib import Path

from lm.tools import scale_store

SIZES = (100, 1_000, 10_000)


def _timed(fn) -> float:
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        fn()
    return time.perf_counter() - t


def measure(uri: str, runs: int, out: Path) -> dict[str, float]:
    """Seconds of each step on the store at uri, which holds the scale exercise of `runs` runs."""
    from mlflow.tracking import MlflowClient

    from analysis import report
    from analysis import runs as runs_table
    from lm.commands import heads, suite
    from lm.tracking.store import Store, every_run

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(scale_store.NAME).experiment_id
    found = {}

    def suite_run():
        found["suite"] = suite.main([f"tracking_uri={uri}", f"seeds={runs // 2}"],
                                    chosen=[scale_store.exercise(runs)])

    def report_run():
        found["report"] = report.main([f"tracking_uri={uri}", f"ablations={scale_store.NAME}", f"out={out}",
                                       "log=false"])

    seconds = {
        "search": _timed(lambda: found.setdefault("listed", len(every_run(client, [experiment])))),
        "suite": _timed(suite_run),
        "report": _timed(report_run),
        "heads": _timed(lambda: found.setdefault("heads", len(heads.finished_runs(Store(uri), scale_store.NAME)))),
        "table": _timed(lambda: found.setdefault("table", len(runs_table.table(ablations=scale_store.NAME,
                                                                                tracking_uri=uri)))),
    }
    if found["suite"] != 0 or found["report"] != 0 or found["listed"] != runs + 1 or found["heads"] != runs \
            or found["table"] != runs:
        raise RuntimeError(f"the scale rows at {runs} runs did not hold: {found}")
    return seconds


ROWS = {"search": "a bare reading of every run (search_runs, paged)",
        "suite": "the suite, nothing to train",
        "report": "`make report` (its report, not logged)",
        "heads": "`make heads EXERCISE=...`: its runs found",
        "table": "runs.table()"}


def scale(table, scratch: str, sizes=SIZES) -> None:
    built = time.perf_counter()
    for n in sizes:
        scale_store.cached(n)
    built = time.perf_counter() - built
    results = {}
    for n in sizes:
        uri = scale_store.copy(n, Path(scratch) / f"scale-{n}")
        results[n] = measure(uri, n, Path(scratch) / f"report-{n}")
    table.section(f"the bookkeeping on stores of {', '.join(f'{n:,}' for n in sizes)} finished runs "
                  f"(lm/tools/scale_store.py; {built:.0f} s to build or find them in {scale_store.CACHE}); seconds at "
                  f"each size, in this process, and the growth from one to the next (target: ×10 runs, at most ×12 "
                  f"time); load average {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")
    for key, what in ROWS.items():
        times = [results[n][key] for n in sizes]
        growth = ", ".join(f"×{b / a:.1f}" for a, b in zip(times, times[1:]))
        table.add(what, " → ".join(f"{t:.1f}" for t in times) + " s", f"growth {growth}")
    largest = sizes[-1]
    ratio = results[largest]["suite"] / results[largest]["search"]
    table.add(f"the suite that trains nothing against a bare reading, {largest:,} runs", f"{ratio:.2f}×",
              "target ≤ 2×")
