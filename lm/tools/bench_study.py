"""`make bench`'s study rows: small studies through `make ablations` against the same runs trained by a plain loop,
one of short runs (300 steps, where the harness's seconds outside the steps weigh most) and one at an exercise's own
recipe (nopos, 1,000 steps).

A block of the suite is `python -m lm.commands.suite` (a whole process: its imports, its workers' start-up, the
plan, the store, the runs and their end-of-run measurements as the suite chooses them, the exercises' means), into
a new store each block; a block of the plain loop trains each of the suite's runs (a twin once) with
lm/tools/plain_loop.py's `train` on a pool of as many single-threaded worker processes as the suite had, started
before the clock. Blocks alternate, A B A B …, under the same load. The plain loop keeps the run's recipe, its
validations included (before training and every eval.every steps, as the lessons' own loops validate). Printed: the
suite's wall time against the sum of its runs' plain-loop times divided by the workers, and each trained run's cost
outside its steps (its MLflow duration, from creation to its end, less its steps at its own ms/step), whole and
beyond the plain loop's own outside its steps (its model built, the recipe's validations). Then the cost model: the
whole `make ablations` at 3 seeds predicted from each run shape's measured step and validation costs and that cost
beyond the plain loop's (docs/speed.md sets it beside the whole study, run). `only=whole`: the whole study (every
exercise at 3 seeds, as `make ablations` runs it) against its runs by the plain loop, one block each.
"""
import multiprocessing as mp
import os
import re
import statistics
import subprocess
import sys
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor, as_completed

from mlflow.tracking import MlflowClient

from lm.suite import load_suite_config, plan
from lm.tools import plain_loop
from lm.tools.bench_process import load, progress

EXERCISES = ["nopos", "scaling"]   # one whose claims read the knock-out, one whose claims read none
WORKERS = 2
FINISHED_LINE = re.compile(r"\[\d+/\d+\] ")   # the suite's line for each run it has finished (lm/suite/scheduler.py)


def _one_thread() -> None:
    """A pool worker's set-up: one torch thread, and an end with the bench's process, however it ends (a SIGTERM'd
    bench left its spawned workers waiting for work that never came)."""
    import threading

    import torch

    torch.set_num_threads(1)
    parent = mp.parent_process()   # its sentinel is ready once the parent has gone

    def orphaned() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=orphaned, daemon=True).start()


def _warm() -> int:
    time.sleep(1.0)   # long enough that each warm-up task lands on its own worker
    return os.getpid()


def _trained_runs(uri: str) -> list:
    """The suite's trained runs (not the parent runs, not the copies, not the runs that read a trained model instead),
    read back from its store."""
    client = MlflowClient(uri)
    runs = [r for exp in client.search_experiments() for r in client.search_runs([exp.experiment_id])]
    return [r for r in runs if r.data.tags.get("role") != "exercise" and "copied_from" not in r.data.tags
            and "init_from_run" not in r.data.tags]


def study(table, scratch: str, quick: bool) -> None:
    """The study rows: 12 runs of 300 steps (the harness's seconds outside the steps weigh most there), then 4 runs
    of an exercise at its recipe's own 1,000 steps, each against the plain loop; then the whole study predicted."""
    if quick:   # 6 runs (5 trained) at the quick suite's toy size, its 20 steps and small evaluations: the test's
        beyond, once = _section(table, scratch, "quick", ["quick=true", f"ablations=[{','.join(EXERCISES)}]",
                                                          "seeds=1", "train.steps=20"], blocks=1)
    else:
        beyond, once = _section(table, scratch, "short", [f"ablations=[{','.join(EXERCISES)}]", "seeds=2",
                                                          "train.steps=300"], blocks=2)
        # nopos: the claims read its knock-out, the costliest measurement, and its recipe is 1,000 steps
        _section(table, scratch, "recipe", ["ablations=[nopos]", "seeds=2"], blocks=2)
    # the prediction counts the validations itself, so beside the steps it adds only the harness's own cost
    predict(table, beyond, once, quick, EXERCISES if quick else ())   # quick: 5 of the 24 shapes


def whole(table, scratch: str, quick: bool) -> None:
    """The whole study, `make ablations` at its defaults (quick: the quick suite), against its runs by the plain loop,
    one block each: about 45 minutes a side on 2 cores."""
    _section(table, scratch, "whole", ["quick=true"] if quick else [], blocks=1)


def _suite(words: list[str], env: dict, bar) -> tuple[int, str]:
    """`python -m lm.commands.suite` on these words, the bar moved on at each run it reports finished. Returns its exit
    status and its last lines, stdout and stderr together."""
    proc = subprocess.Popen([sys.executable, "-m", "lm.commands.suite", *words], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    last = deque(maxlen=40)
    for line in proc.stdout:
        last.append(line)
        if FINISHED_LINE.match(line):
            bar.update()
    return proc.wait(), "".join(last)[-2000:]


def _section(table, scratch: str, name: str, words: list[str], blocks: int) -> tuple[float, float]:
    """The suite on these words against the same runs by the plain loop, `blocks` blocks each, alternating. Returns
    the median run's cost beyond the plain loop's outside its steps, and the once-a-suite seconds."""
    words = [*words, f"workers={WORKERS}", "threads=1"]
    jobs = plan(load_suite_config(words)).jobs
    # A twin is copied, not trained, and a run of an exercise that reads another's trained models (temperature) trains
    # nothing: the plain loop has neither, and the suite's seconds for them stay on its side. Longest first, as the
    # suite orders its runs.
    configs = {j.config_hash: j.cfg for j in sorted(jobs, key=lambda j: -j.cost) if not j.spec.init_from}
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    walls, ideals, packed, outside, beyond, fixed = [], [], [], [], [], []
    # The bar counts runs, the suite's as it reports each finished one and the plain loop's as each returns: a block
    # of the whole study is 47 minutes.
    with ProcessPoolExecutor(WORKERS, mp_context=mp.get_context("spawn"), initializer=_one_thread) as pool, \
            progress(blocks * (len(jobs) + len(configs)), f"study ({name}): the suite's and the plain loop's runs") \
            as bar:
        list(f.result() for f in [pool.submit(_warm) for _ in range(WORKERS)])
        for block in range(blocks):
            store = os.path.join(scratch, f"study-{name}{block}")
            t_suite = time.time()
            status, tail = _suite(words, {**env, "TINYGPT_STORE": store}, bar)
            end = time.time()
            if status:
                raise RuntimeError(f"the bench's study failed: {tail}")
            walls.append(end - t_suite)
            t = time.time()
            futures = {h: pool.submit(plain_loop.train, cfg, cfg.train.steps, 1) for h, cfg in configs.items()}
            for _ in as_completed(futures.values()):
                bar.update()
            plain = {h: f.result() for h, f in futures.items()}
            packed.append(time.time() - t)
            ideals.append(sum(p.seconds for p in plain.values()) / WORKERS)
            runs = _trained_runs(f"sqlite:///{store}/mlflow.db")
            for r in runs:
                h = r.data.tags["config_hash"]
                p, steps = plain[h], configs[h].train.steps
                run_outside = (r.info.end_time - r.info.start_time) / 1000 - steps * r.data.metrics["ms_per_step"] / 1000
                outside.append(run_outside)
                beyond.append(run_outside - (p.seconds - steps * p.ms_per_step / 1000))
            fixed.append(min(r.info.start_time for r in runs) / 1000 - t_suite + end - max(r.info.end_time for r in runs) / 1000)
    ratio = statistics.median(w / i for w, i in zip(walls, ideals))
    step_counts = sorted({cfg.train.steps for cfg in configs.values()})
    shown = " ".join(["make ablations", *(w for w in words if not w.startswith(("workers", "threads")))])
    table.section(f"a study: `{shown}` "
                  f"({len(jobs)} runs, {len(configs)} trained, {'/'.join(map(str, step_counts))} steps, "
                  f"{WORKERS} workers × 1 thread) against the same runs by the plain loop, {blocks} block(s) each"
                  f"{', alternating' if blocks > 1 else ''}; load average {load()}")
    table.add("the suite, a whole process", f"{statistics.median(walls):.1f} s",
              "blocks " + " ".join(f"{w:.0f}" for w in walls))
    table.add("the plain loop: its runs' seconds ÷ the workers", f"{statistics.median(ideals):.1f} s",
              f"on {WORKERS} workers, longest first: " + " ".join(f"{p:.0f}" for p in packed) + " s")
    table.add("the suite against the plain loop ÷ the workers", f"{ratio:.3f}", "target ≤ 1.15")
    table.add("  of which once a suite (start-up before its first run, the means after its last)",
              f"{statistics.median(fixed):.1f} s", f"{statistics.median(fixed) / statistics.median(walls):.0%} of "
              "the suite; a worker's own start-up is in its first run's cost below")
    table.add("a trained run's cost outside its steps, median", f"{statistics.median(outside):.2f} s",
              f"the recipe's validations included; mean {statistics.mean(outside):.2f} s, {min(outside):.1f} to "
              f"{max(outside):.1f} s over {len(outside)} runs")
    table.add("  beyond the plain loop's own (its model built, the recipe's validations), median",
              f"{statistics.median(beyond):.2f} s", f"target ≤ 3 s; mean {statistics.mean(beyond):.2f} s, "
              f"{min(beyond):.1f} to {max(beyond):.1f} s over {len(beyond)} runs")
    return statistics.median(beyond), statistics.median(fixed)


def _per_step(cfg, steps: int) -> tuple[float, float, float]:
    """A run's costs on one thread, measured: ms a training step (the plain loop's, `steps` of them), seconds a
    validation pass, and seconds its honest loss adds to each validation (0 where it is off)."""
    import torch

    from lm.model.model import GPT, honest_loss

    done = plain_loop.train(cfg, steps, 1)
    honest = 0.0
    if cfg.eval.honest:
        model = GPT(cfg.model).eval()
        x = torch.randint(cfg.model.vocab_size, (cfg.eval.honest_windows, cfg.model.block_size))
        t = time.perf_counter()
        honest_loss(model, x, x)
        honest = time.perf_counter() - t
    return done.ms_per_step, done.validation_s, honest


def _shape(cfg) -> str:
    """What a step's and a validation's cost depend on: the model, the batch, the corpus and the evaluation's sizes."""
    return repr((cfg.model, cfg.train.batch_size, cfg.train.optimizer, cfg.data.filename, cfg.eval.val_batches,
                 cfg.eval.val_batch_size, cfg.eval.honest, cfg.eval.honest_windows))


def _packed(seconds: list[float], workers: int) -> float:
    """The wall seconds of runs taking `seconds` each, packed longest first onto the workers, as the suite packs them."""
    loads = [0.0] * workers
    for s in sorted(seconds, reverse=True):
        loads[loads.index(min(loads))] += s
    return max(loads)


def predict(table, outside: float, once: float, quick: bool, ablations: list[str] = (), seeds: int = 3,
            workers: int = WORKERS) -> float:
    """`make ablations` at `seeds` seeds on the exercises named (every exercise where none is), predicted: each
    trained run's steps at its measured ms/step, its validations (the honest loss's included) at their measured
    seconds, and `outside` seconds beside (the study's measured cost of a run beyond the plain loop's), packed longest
    first onto `workers` single-threaded workers, and `once` seconds a suite. Beside it the same runs by the plain
    loop, without the two, and the ratio of the two: the study section's ratio at the recipes' own step counts.
    Returns the predicted minutes; prints each exercise's share."""
    chosen = [f"ablations=[{','.join(ablations)}]"] if ablations else []
    jobs = plan(load_suite_config([*chosen, f"seeds={seeds}", f"workers={workers}", "threads=1"])).jobs
    trained = list({j.config_hash: j for j in jobs}.values())   # a twin is copied, not trained
    shapes = {_shape(j.cfg): j.cfg for j in trained}
    steps = 5 if quick else 20
    costs = {}
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"), initializer=_one_thread) as pool, \
            progress(len(shapes), "the study's run shapes, each timed") as bar:
        for k, f in [(k, pool.submit(_per_step, cfg, steps)) for k, cfg in shapes.items()]:
            costs[k] = f.result()
            bar.update()
    plain, by_exercise = [], {}
    for j in trained:
        ms, validation, honest = costs[_shape(j.cfg)]
        t, e = j.cfg.train, j.cfg.eval
        s = (0 if j.spec.init_from else t.steps * ms / 1000) + (t.steps // e.every + 1) * (validation + honest)
        plain.append(s)
        by_exercise[j.spec.exercise] = by_exercise.get(j.spec.exercise, 0.0) + s + outside
    seconds = [s + outside for s in plain]
    minutes = (_packed(seconds, workers) + once) / 60
    plain_minutes = _packed(plain, workers) / 60
    table.section(f"`make ablations{' ' + chosen[0] if chosen else ''}` at {seeds} seeds, predicted: {len(jobs)} runs, {len(trained)} "
                  f"trained, {len(shapes)} shapes each measured over {steps} plain-loop steps on 1 thread, {workers} "
                  f"workers; load average {load()}")
    table.add("the whole study, predicted" if not ablations else "these exercises, predicted", f"{minutes:.1f} min",
              "goal ≤ 60 min on 2 cores for the whole study")
    table.add("  against the same runs by the plain loop ÷ the workers, predicted", f"{minutes / plain_minutes:.3f}",
              f"their plain loop {plain_minutes:.1f} min; target ≤ 1.15, as the study above at the recipes' step counts")
    for name, s in sorted(by_exercise.items(), key=lambda kv: -kv[1]):
        table.add(f"  {name}", f"{s / 60 / workers:.1f} min", f"{s / sum(seconds):.0%} of the runs' seconds")
    return minutes
