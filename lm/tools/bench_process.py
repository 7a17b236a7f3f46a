"""`make bench`'s whole-process rows: how long each command takes to answer a mistake or --cfg, a whole
`make train` process against a plain loop's process over the same steps, with where the difference goes, and
`make report` on the store a user's `make report` reads.

Every figure here is the wall time of a separate process, start-up included, as a user waits for it.
"""
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

from tqdm import tqdm

from lm.tracking.store_check import resolve_uri, shown

# (what, the command's arguments after `python`, the target in seconds or None)
STARTUP = [
    ("python -c pass (the interpreter alone)", ["-c", "pass"], None),
    ("python -m lm.commands.train model.n_head=0 (a bad value)", ["-m", "lm.commands.train", "model.n_head=0"], 1.5),
    ("python -m lm.commands.train -m model.n_head=1,,2 (a bad sweep)", ["-m", "lm.commands.train", "-m", "model.n_head=1,,2"], 1.5),
    ("python -m lm.commands.train --resume 000… (no such run)", ["-m", "lm.commands.train", "--resume", "0" * 32], 1.5),
    ("python -m lm.commands.suite ablations=[nosuch]", ["-m", "lm.commands.suite", "ablations=[nosuch]"], 1.5),
    ("python -m lm.commands.sample run=deadbeef", ["-m", "lm.commands.sample", "run=deadbeef"], 1.5),
    ("python -m analysis.report ablations=[nosuch]", ["-m", "analysis.report", "ablations=[nosuch]"], 1.5),
    ("python -m lm.commands.heads force=ture", ["-m", "lm.commands.heads", "force=ture"], 1.5),
    ("python -m lm.commands.ui port=99999", ["-m", "lm.commands.ui", "port=99999"], 1.5),
    ("python -m lm.commands.train --cfg", ["-m", "lm.commands.train", "--cfg"], 2.0),
    ("for comparison, importing torch", ["-c", "import torch"], None),
    ("  pytorch_lightning", ["-c", "import pytorch_lightning"], None),
    ("  mlflow", ["-c", "import mlflow"], None),
    ("  pandas, seaborn", ["-c", "import pandas, seaborn"], None),
    ("  all that one run imports (import lm.run.train)", ["-c", "import lm.run.train"], None),
]

# The profile's rows: (what, the file the function is in, its name). Cumulative times of the outermost call.
BREAKDOWN = [
    ("imports (every import, at start-up and later)", "<frozen importlib._bootstrap>", "_find_and_load"),
    ("store opened, its database created", "lm/tracking/store.py", "__init__"),
    ("run created", "lm/tracking/store.py", "create_run"),
    ("training (Lightning's fit), of which:", "pytorch_lightning/trainer/trainer.py", "fit"),
    ("  validation every eval.every steps", "pytorch_lightning/loops/evaluation_loop.py", "run"),
    ("  checkpoint writes", "lm/run/callbacks.py", "_save_checkpoint"),
    ("  the curve's metrics written", "lm/tracking/store.py", "log_metrics"),
    ("validation of the untrained model and the final one", "lm/measures/probes.py", "validation"),
    ("end-of-run measurements (the final validation too), of which:", "lm/run/train.py", "measure"),
    ("  samples", "lm/measures/probes.py", "samples"),
    ("  head statistics", "lm/heads/measure.py", "head_statistics"),
    ("  attention map", "lm/measures/probes.py", "attention_on"),
    ("  artifact uploads", "mlflow/tracking/client.py", "log_artifacts"),
    ("  every head, attention and MLP knocked out (12 targets × 2 ablations)", "lm/knockout/measure.py", "knockout"),
    ("  the MLflow model (torch.export, its warm-up included)", "lm/measures/model_flavor.py", "log"),
]

# The floor under the ratio: what a run imports beyond the plain loop's own imports (torch, the model, the config),
# each a process of its own, as (what, the modules). Training cannot start before Lightning is imported, and MLflow
# writes the run from its first line on.
IMPORTS = [
    ("the plain loop's", "lm.tools.plain_loop"),
    ("Lightning's", "pytorch_lightning, lm.tools.plain_loop"),
    ("Lightning's and MLflow's", "pytorch_lightning, mlflow, lm.tools.plain_loop"),
    ("all a run's (lm.run.train)", "lm.run.train, lm.tools.plain_loop"),
]


class Timed(NamedTuple):
    seconds: float    # the process, start to end
    exit: float       # from its last line on stdout to its end
    code: int
    out: str = ""     # what it printed on stdout


def wall(args: list[str], env: dict, check: int | None = None) -> float:
    return timed(args, env, check).seconds


def timed(args: list[str], env: dict, check: int | None = None) -> Timed:
    """A process of `python args`, timed; one that does not exit with check (when given) is an error."""
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([sys.executable, *args], env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        last, lines = t, []
        for line in p.stdout:
            last = time.perf_counter()
            lines.append(line)
        p.wait()
        end = time.perf_counter()
        err.seek(0)
        if check is not None and p.returncode != check:
            raise RuntimeError(f"python {' '.join(args)} exited {p.returncode}, not {check}: {err.read()[-2000:]}")
    return Timed(end - t, end - last, p.returncode, "".join(lines))


def ms_per_step(out: str) -> float:
    """The in-fit milliseconds a step that a run or the plain loop printed."""
    found = re.search(r"([\d.]+) ms/step", out)
    if not found:
        raise RuntimeError(f"no ms/step in the output: {out[-500:]!r}")
    return float(found[1])


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def progress(total: int, what: str) -> tqdm:
    """A bar with an ETA on the terminal while a section measures; the table it prints after stays on stdout."""
    return tqdm(total=total, desc=what, unit="part", file=sys.stderr, leave=False, disable=not sys.stderr.isatty())


def startup(table, scratch: str, n: int, commands=STARTUP) -> None:
    env = {**os.environ, "TINYGPT_STORE": os.path.join(scratch, "startup")}
    env.pop("MLFLOW_TRACKING_URI", None)
    table.section(f"start-up: wall seconds until a command has answered, a process each, median of {n}")
    for what, args, target in commands:
        s = statistics.median(wall(args, env) for _ in range(n))
        table.add(what, f"{s:.2f} s", f"target ≤ {target:.1f} s" if target else "")


def report(table, scratch: str, n: int, quick: bool = False) -> None:
    """`python -m analysis.report` on the store `make report` would read (the quick suite's with quick), beside a
    bare read of the same runs (`python -m analysis.report.bare_read`: the same runs found and every history and
    artifact the report reads fetched, nothing judged or drawn), each a process, in pairs (report, read, report,
    read: each pair under the same load), the median of n; the report writes to the scratch folder and logs nothing,
    so the store is left as it was."""
    what = "the quick suite's" if quick else "the full suite's"
    uri = resolve_uri(None)
    options = ["log=false", f"quick={quick}"]
    args = ["-m", "analysis.report", f"out={os.path.join(scratch, 'report')}", *options]
    table.section(f"`make report` on {shown(uri)}, {what} runs, beside a bare read of the same runs, a process each, "
                  f"in pairs, median of {n}, logging itself left out; load average {load()}")
    runs, reads = [], []
    for _ in range(n):
        runs.append(timed(args, os.environ))
        reads.append(timed(["-m", "analysis.report.bare_read", *options], os.environ))
        if runs[-1].code == 1:  # the report's status for a store with nothing to report
            table.add("python -m analysis.report", "no runs", f"run `make ablations{'-quick' if quick else ''}` first")
            return
    for command, done in (("python -m analysis.report", runs), ("python -m analysis.report.bare_read", reads)):
        if any(r.code for r in done):
            raise RuntimeError(f"{command} exited {max(r.code for r in done)}")
    read = json.loads(reads[-1].out.splitlines()[-1])
    s, floor = statistics.median(r.seconds for r in runs), statistics.median(r.seconds for r in reads)
    table.add("python -m analysis.report", f"{s:.1f} s", f"target ≤ 10 s on the full 3-seed store; "
                                                           f"{read['runs']} runs")
    table.add("  a bare read of the same runs", f"{floor:.1f} s",
              f"{read['histories']} histories, {read['artifacts']} artifacts")
    table.add("  the report against the bare read", f"{s / floor:.1f}×", "the report's own work: judging, drawing, "
                                                                          "writing")


def spread(ratios: list[float]) -> str:
    """The pairs' range (and middle half from 4 pairs on), at the 3 decimals their median is printed with: rounding
    keeps order, so the printed median always lies within the printed range (at 2 decimals a median of 2.463 would
    print as 2.46 beside pairs 2.46–2.47, which reads as outside them)."""
    ordered = sorted(ratios)
    text = f"pairs {ordered[0]:.3f}–{ordered[-1]:.3f}"
    if len(ordered) >= 4:
        text += ", middle half {0:.3f}–{2:.3f}".format(*statistics.quantiles(ordered, method="inclusive"))
    return text


def whole_run(table, scratch: str, steps: int, pairs: int, extra: list[str] = ()) -> None:
    """`python -m lm.commands.train` at its default options (and any extra overrides) against `python -m lm.tools.plain_loop`
    with the same overrides (the same recipe, its validations included),
    in pairs, A B A B … (each pair under the same load, whatever the machine does between pairs), on a store that
    exists already, as every `make train` but the first finds it; the median of the pairs' ratios with their
    spread, the in-fit ms/step of both, and the harness's extra seconds split between the steps and the rest; then
    one run under cProfile, on a new store, for where the rest goes. The ratio of two runs back to back swings from
    one bench to the next by more than the harness's cost, so each pair's ratio is what the medians are of."""
    env = {**os.environ, "TINYGPT_STORE": os.path.join(scratch, "process")}
    env.pop("MLFLOW_TRACKING_URI", None)
    created = wall(["-c", "from lm.tracking.store import Store; Store()"], env, 0) - wall(
        ["-c", "import lm.tracking.store"], env, 0)
    harness, plain = [], []
    for _ in range(pairs):
        plain.append(timed(["-m", "lm.tools.plain_loop", str(steps), *extra], env, 0))
        harness.append(timed(["-m", "lm.commands.train", f"train.steps={steps}", *extra], env, 0))
    ratios = sorted(h.seconds / p.seconds for h, p in zip(harness, plain))
    h, h_exit, p, p_exit = (statistics.median(getattr(r, k) for r in runs)
                            for runs in (harness, plain) for k in ("seconds", "exit"))
    h_ms, p_ms = (statistics.median(ms_per_step(r.out) for r in runs) for runs in (harness, plain))
    step_ratios = sorted(ms_per_step(a.out) / ms_per_step(b.out) for a, b in zip(harness, plain))
    extra_s = statistics.median(a.seconds - b.seconds for a, b in zip(harness, plain))
    in_fit = statistics.median(steps * (ms_per_step(a.out) - ms_per_step(b.out)) / 1000 for a, b in zip(harness, plain))
    table.section(f"a whole `make train` process against a plain PyTorch loop's process, {steps} steps each, start-up "
                  f"and the recipe's validations included, {pairs} pairs A B A B …, medians; load average {load()}")
    table.add("plain loop (python -m lm.tools.plain_loop)", f"{p:.1f} s", f"in fit {p_ms:.2f} ms/step")
    table.add("make train, default options (python -m lm.commands.train)", f"{h:.1f} s", f"in fit {h_ms:.2f} ms/step")
    table.add("ratio of in-fit steps, pair by pair", f"{statistics.median(step_ratios):.3f}",
              f"target ≤ 1.05; {spread(step_ratios)}")
    table.add("ratio of whole processes, pair by pair", f"{statistics.median(ratios):.3f}",
              f"target ≤ 1.15; {spread(ratios)}")
    table.add("  the harness's extra seconds, of which", f"{extra_s:.1f} s",
              f"in the steps {in_fit:.1f} s, outside them (start-up, evaluation, measurements, exit) "
              f"{extra_s - in_fit:.1f} s")
    table.add("  of which the exit, after the last line: plain; make train", f"{p_exit:.2f} s; {h_exit:.2f} s",
              "the interpreter's teardown (lm.process.finish)")
    repeats = min(pairs, 3)
    floor = {what: statistics.median(wall(["-c", f"import {modules}"], env, 0) for _ in range(repeats))
             for what, modules in IMPORTS}
    for what, _ in IMPORTS[1:]:
        beyond = floor[what] - floor[IMPORTS[0][0]]
        table.add(f"  {what} imports, beyond the plain loop's", f"{beyond:.1f} s", f"{beyond / p:.1%} of the plain loop")
    imports = floor[IMPORTS[-1][0]] - floor[IMPORTS[0][0]]
    table.add("  of the harness's extra seconds, its imports'", f"{imports / extra_s:.0%}" if extra_s > 0 else "-",
              f"within 1.15× leaves {0.15 * p:.1f} s beyond the plain loop; the imports alone take {imports:.1f} s"
              + (": they alone forbid the target" if imports > 0.15 * p else ""))
    table.add("a new store's database, created once (Store())", f"{created:.1f} s", "not in the runs above")

    prof, collector = os.path.join(scratch, "train.prof"), os.path.join(scratch, "gc.json")
    env_new = {**env, "TINYGPT_STORE": os.path.join(scratch, "profiled")}
    total = wall(["-m", "cProfile", "-o", prof, "-m", "lm.tools.gc_clock", collector, "lm.commands.train", f"train.steps={steps}",
                  *extra], env_new, 0)
    stats = pstats.Stats(prof).stats
    table.section(f"where a whole run's seconds go: one `make train` of {steps} steps under cProfile ({total:.1f} s "
                  f"wall), which slows Python code more than torch's kernels: read shares, not exact seconds")
    for what, where, name in BREAKDOWN:
        found = [ct for (file, _, fn), (_, _, _, ct, _) in stats.items()
                 if fn == name and file.replace(os.sep, "/").endswith(where)]
        if found:
            table.add(what, f"{max(found):.2f} s", f"{max(found) / total:.0%} of the run")
    with open(collector) as f:
        gc_clock = json.load(f)
    table.add("the garbage collector (gc.callbacks: cProfile does not see it)", f"{sum(gc_clock['seconds']):.2f} s",
              f"{gc_clock['collections'][2]} full collections, {gc_clock['seconds'][2]:.2f} s of it")
