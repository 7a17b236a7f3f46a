"""`make bench`'s scale rows: the bookkeeping on stores of 100, 1,000 and 10,000 finished runs (lm/tools/scale_store.py,
built once and kept in ~/.cache/tinygpt/scale), and how each grows from one size to the next.

For each size, on a fresh copy of the store, in this process (the imports, the same at every size, left out):
a bare reading of every run (lm.tracking.store.every_run, MLflow's search_runs page by page: the floor of reading
them once) and `make heads EXERCISE=...`'s discovery of the runs; the suite that trains nothing, as a process
that says how long its bookkeeping took (its imports left out); `make report`'s report and `runs.table()`, in a
process of analysis's own (analysis/scale_timing.py).
"""
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from mlflow.tracking import MlflowClient

from lm.tools import scale_store
from lm.tracking.store import every_run, finished_runs

SIZES = (100, 1_000, 10_000)


def _timed(fn) -> float:
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        fn()
    return time.perf_counter() - t


def measure(uri: str, runs: int, out: Path) -> dict[str, float]:
    """Seconds of each step on the store at uri, which holds the scale exercise of `runs` runs."""
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(scale_store.NAME).experiment_id
    found = {}
    seconds = {
        "search": _timed(lambda: found.setdefault("listed", len(every_run(client, [experiment])))),
        "heads": _timed(lambda: found.setdefault("heads", len(finished_runs(client, scale_store.NAME)))),
    }
    if found != {"listed": runs + 1, "heads": runs}:
        raise RuntimeError(f"the scale rows at {runs} runs did not hold: {found}")
    # The suite as a user starts it, with the scale exercise as a sweep gives its own (an exercise file of its own
    # in a folder of its own); it says how long its bookkeeping took, the imports left out.
    folder = out.with_name(f"{out.name}-exercises")
    folder.mkdir(parents=True)
    (folder / f"{scale_store.NAME}.yaml").write_text(scale_store.exercise_yaml(runs // 2))
    p = _python(["-m", "lm.commands.suite", f"ablations=[{scale_store.NAME}]", f"tracking_uri={uri}"],
                TINYGPT_EXPERIMENTS=str(folder))
    checked = re.search(rf"{runs} runs checked in ([\d.]+) s", p.stdout)
    if "0 to run" not in p.stdout or not checked:
        raise RuntimeError(f"the suite at {runs} runs trained or said nothing: {p.stdout[-1000:]}")
    seconds["suite"] = float(checked[1])
    # the report and runs.table(), timed in a process of analysis's own (lm never imports analysis)
    p = _python(["-m", "analysis.scale_timing", uri, scale_store.NAME, str(runs), str(out)])
    return {**seconds, **json.loads(p.stdout.splitlines()[-1])}


def _python(args: list[str], **env) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, env={**os.environ, **env})
    if p.returncode:
        raise RuntimeError(f"python {' '.join(args)} exited {p.returncode}: {p.stderr[-2000:]}")
    return p


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
