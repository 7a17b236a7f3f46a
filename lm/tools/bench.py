"""`make bench`: how fast this machine trains and samples the lessons' model, measured side by side in one run.

    python -m lm.tools.bench [quick=true] [threads=N] [chunks=N] [pairs=N] [steps=N]
                             [only=train,sample,suite,memory,startup,process,report,scale,study,validation,whole,shared]

Prints one table: the fp32 matmul rate; the model's FLOPs per training step; the step's matmuls and attention
kernels alone, and the MFU they allow; a plain PyTorch loop against the harness (Lightning, MLflow and the run's
callbacks) with its default options, compiled, and with the batch split between the threads; the sampler with and
without its KV cache, on one thread; the suite's workers × threads; the peak memory of whole runs at N and 2N steps;
how long each command takes to print a one-line error or its --cfg; a whole `make train` process against a plain
loop's process over the same steps, with where the harness's extra seconds go; `make report` on the store you have,
which it reads and leaves as it was (lm/tools/bench_process.py); and a small study through `make ablations` against
the same runs by a plain loop (lm/tools/bench_study.py); with only=whole, which no other default names, the whole
study against its runs by the plain loop, once each (about an hour and a half); with only=shared, which no other
default names either, each command alone and beside a process busy on one core (lm/tools/bench_shared.py). The plain
loop runs in chunks between the harness's own chunks of steps (A B A B …, under the same load), each chunk's first
step left out; ratios are medians of chunk against chunk. The machine's load average is printed with them: other
work on the machine slows everything, and two OpenMP threads most. `quick=true` takes one to two minutes; the study
rows alone take about ten.
Runs go to a scratch MLflow store, deleted after. The options: lm/settings/options.py's BenchOptions.
"""
from __future__ import annotations

import sys

if __name__ == "__main__":  # the options checked before torch loads
    from lm.settings import options
    options.exit_if_wrong(options.BenchOptions, sys.argv[1:])

import contextlib
import io
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytorch_lightning as pl
import torch
from tqdm import tqdm

from lm.model.data import load_corpus, val_batches
from lm.model.model import GPT, GPTConfig, token_losses, train_flops
from lm.model.sample import generate
from lm.run import train
from lm.settings import config
from lm.settings.options import BenchOptions as Options
from lm.settings.options import parse as parse_options
from lm.suite.launchers.local import LocalPool
from lm.suite.worker import run_job
from lm.tools import bench_process, bench_scale, bench_shared, bench_study
from lm.tools.bench_process import load, progress
from lm.tracking.store import Store

# The harness's speed options; each changes only round-off (the bench and tests/speed show by how much). With two
# threads or more, FAST is the fastest set here; a compiled step is slower split, its kernels holding Python's lock.
FAST = ["runtime.split_batch=true", "runtime.optimizer_impl=fused"]
COMPILED = ["runtime.compile=true", "runtime.optimizer_impl=fused"]
EVERY = ["runtime.split_batch=true", "runtime.optimizer_impl=fused", "runtime.compile=true"]
LARGEST = ["model.n_layer=4", "model.n_embd=128"]  # the scaling exercise's biggest variant


def parse(argv: list[str]) -> Options:
    return parse_options(Options, argv).finish()


# ---------------------------------------------------------------------------------------------------------------
# FLOPs and the matmul rate


def matmul_shapes(c: GPTConfig, batch_size: int) -> list[tuple[int, int, int]]:
    """The (m, k, n) of every weight matmul of a training step, forward, input gradient and weight gradient: each
    block's W_qkv, W_o and MLP, then the output layer. Their 2·m·k·n add up to the 6·N·B·T of train_flops."""
    N, d, V = batch_size * c.block_size, c.n_embd, c.vocab_size
    out = []
    for k, n in [(d, 3 * d), (d, d), (d, 4 * d), (4 * d, d)] * c.n_layer + [(d, V)]:
        out += [(N, k, n), (N, n, k), (n, N, k)]
    return out


def _mm_rate(m: int, k: int, n: int, seconds: float = 0.15) -> float:
    a, b, out = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
    for _ in range(3):
        torch.mm(a, b, out=out)
    reps = max(1, int(seconds * 60e9 / (2 * m * k * n)))
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b, out=out)
        times.append((time.perf_counter() - t) / reps)
    return 2 * m * k * n / statistics.median(times) / 1e9


class KernelFloor:
    """A training step's weight matmuls and attention kernels alone, with nothing else to do: every matmul of the
    forward and backward passes on contiguous operands, and scaled_dot_product_attention forward and backward, per
    block. With shards > 1, each shard of the batch on a thread of its own with one torch thread, side by side, as
    runtime.split_batch runs them. A step does all this and more, so flops / floor / matmul rate bounds the MFU
    these kernels allow."""

    def __init__(self, c: GPTConfig, batch_size: int, shards: int, threads: int):
        self.c, self.shards, self.threads = c, shards, threads
        self.work = [self._operands(batch_size // shards) for _ in range(shards)]

    def _operands(self, B: int):
        c = self.c
        shapes = matmul_shapes(c, B)
        # one buffer per operand, each matmul reading the start of it: caches as warm as they can be
        lhs, rhs, res = (torch.randn(max(s[i] * s[j] for s in shapes)) for i, j in ((0, 1), (1, 2), (0, 2)))
        mats = [(lhs[:m * k].view(m, k), rhs[:k * n].view(k, n), res[:m * n].view(m, n)) for m, k, n in shapes]
        q, k, v = (torch.randn(B, c.n_head, c.block_size, c.n_embd // c.n_head, requires_grad=True) for _ in range(3))
        grad = torch.randn_like(q)

        def step():
            for a, b, out in mats:
                torch.mm(a, b, out=out)
            for _ in range(c.n_layer):
                torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)
        return step

    def seconds(self, reps: int = 5) -> float:
        inside = torch.get_num_threads()
        torch.set_num_threads(1 if self.shards > 1 else self.threads)  # threads started later take this too
        try:
            with ThreadPoolExecutor(self.shards) as pool:
                list(pool.map(lambda step: step(), self.work))
                t = time.perf_counter()
                list(pool.map(lambda step: [step() for _ in range(reps)], self.work))
                return (time.perf_counter() - t) / reps
        finally:
            torch.set_num_threads(inside)


# ---------------------------------------------------------------------------------------------------------------
# Training: a plain loop and the harness, interleaved


class PlainLoop:
    """The idiomatic loop: the model, torch's Adam, random windows, nothing else. Adam takes its foreach kernels, as
    `make train` does by default (runtime.optimizer_impl=foreach; torch's own default on the CPU is the slower
    per-tensor loop, which flattered the harness by up to 0.5 ms a step): the ratio is then the harness's alone."""

    def __init__(self, corpus, cfg, seed: int = 0):
        torch.manual_seed(seed)
        self.corpus, self.cfg = corpus, cfg
        self.model = GPT(cfg.model)
        t = cfg.train
        self.opt = torch.optim.Adam(self.model.parameters(), lr=t.lr, betas=tuple(t.betas), foreach=True)
        self.g = torch.Generator().manual_seed(seed)

    def run(self, steps: int) -> float:
        """Seconds per step, over all but the first of `steps` (which finds the caches holding other work)."""
        B, T = self.cfg.train.batch_size, self.cfg.model.block_size
        for i in range(steps):
            if i == 1:
                t = time.perf_counter()
            x, y = self.corpus.batch("train", B, T, self.g)
            _, loss = self.model(x, y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        return (time.perf_counter() - t) / (steps - 1)


class _Interleaved(pl.Callback):
    """Times the harness's run in chunks of `chunk` steps and, between chunks, runs as many steps of the plain loop:
    A B A B …, at the same moments, under the same load. Each chunk's first step is left out of its time, harness
    and plain alike: it starts with the caches full of the other's work. Handed to the run through train.execute's
    callbacks."""
    floors: dict[int, KernelFloor] = {}
    bar: tqdm | None = None    # the section's, one tick a chunk
    chunk = 50

    def __init__(self, plain: PlainLoop, warmup: int, threads: int):
        self.plain, self.warmup, self.threads = plain, warmup, threads
        self.harness: list[float] = []   # seconds per step, each chunk's
        self.plain_s: list[float] = []
        self.mm_rates: list[float] = []
        self.floor_s: dict[int, list[float]] = {n: [] for n in self.floors}
        self.first_step_s = 0.0
        self._resumed = 0.0
        self._n = 0

    def on_train_start(self, trainer, pl_module):
        self._resumed = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        now, self._n = time.perf_counter(), self._n + 1
        if self._n == 1:
            self.first_step_s = now - self._resumed
        if self._n > self.warmup and (self._n - self.warmup) % self.chunk == 1:
            self._resumed = now   # the chunk's first step is done
        if self._n < self.warmup or (self._n - self.warmup) % self.chunk:
            return
        if self._n > self.warmup:
            self.harness.append((now - self._resumed) / (self.chunk - 1))
            self.bar.update()
        inside = torch.get_num_threads()  # a run that splits its batches trains on one torch thread a shard
        torch.set_num_threads(self.threads)
        self.plain_s.append(self.plain.run(self.chunk))
        self.mm_rates.append(_mm_rate(1024, 1024, 1024, seconds=0.03))
        for n, floor in self.floors.items():
            self.floor_s[n].append(floor.seconds())
        torch.set_num_threads(inside)
        self._resumed = time.perf_counter()


def harness_run(corpus, store, overrides: list[str], plain: PlainLoop, warmup: int, chunks: int, name: str):
    """One run through the harness's own code (train.execute), validating only at the end, with the plain loop's
    chunks interleaved. Returns the recorder (its chunk times) and the run's summary."""
    steps = warmup + chunks * _Interleaved.chunk
    cfg = config.load([f"train.steps={steps}", f"eval.every={steps}", "eval.head_windows=8", "sample.length=50",
                       f"tracking.uri={store.uri}", "tracking.experiment=bench", *overrides])
    run_id = store.create_run("bench", name, {})
    timer = _Interleaved(plain, warmup, torch.get_num_threads())
    # the progress bar still draws, out of sight
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        result = train.execute(cfg, corpus, store, run_id, callbacks=[timer])
    if result["status"] != "FINISHED":
        raise RuntimeError(f"bench run {name} {result['status']}: {result.get('reason')}")
    return timer, result


# ---------------------------------------------------------------------------------------------------------------
# Sampling, the suite, memory


# The goal for 1,000 characters from the base model on one thread: ours, as no lesson times its sampler.
SAMPLE_GOAL_S = 0.15


def bench_sample(o: Options, corpus, cfg, table: Table) -> None:
    """The sampler with its KV cache against the same loop without it, which runs the model over the whole window
    for every character: 1,000 characters from the base model, A B A B, on one thread, as the suite's workers
    sample."""
    torch.manual_seed(0)
    model = GPT(cfg.model).eval()
    prompt, n = corpus.encode(cfg.data.sample_prompt), 1000
    times: dict[bool, list[float]] = {True: [], False: []}
    outs = {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        generate(model, prompt, 100, 0.8, 1)
        for _ in range(5 if o.quick else 11):
            for cache in (True, False):
                t = time.perf_counter()
                outs[cache] = generate(model, prompt, n, cfg.sample.temperature, cfg.sample.seed, cache=cache)
                times[cache].append(time.perf_counter() - t)
    finally:
        torch.set_num_threads(threads)
    cached, full = statistics.median(times[True]), statistics.median(times[False])
    table.section(f"sampling {n:,} characters, base config, 1 thread as the suite's workers sample (medians of "
                  f"{len(times[True])}, alternating)")
    met = "met" if cached <= SAMPLE_GOAL_S else "not met"
    table.add("KV cache", f"{cached:.3f} s", f"goal ≤ {SAMPLE_GOAL_S} s: {met}")
    table.add("no cache: the model over the whole window every character", f"{full:.3f} s")
    same = outs[True] == outs[False]
    table.add("speed-up", f"{full / cached:.2f}×", f"no cache / KV cache, target ≥ 3×; same characters: {same}")


def bench_validation(o: Options, corpus, table: Table, every: int = 125, before: int = 250) -> None:
    """What a denser curve would cost lesson 002's exercises (experiments/recipe002.yaml): one validation of lesson
    002's model (its fixed windows, as the run's validation loop scores them) against its training steps, alternating
    A B A B, and what validating every `every` steps instead of its recipe's `before` adds to a run of its steps."""
    cfg = config.load(["profile=cpu"])
    e, steps = cfg.eval, cfg.train.steps
    plain = PlainLoop(corpus, cfg)
    batches = val_batches(corpus, e.val_batches, e.val_batch_size, cfg.model.block_size)
    per_round = 20
    val_s, step_s = [], []
    for _ in range(3 if o.quick else 5):
        step_s.append(plain.run(per_round + 1))
        plain.model.eval()
        t = time.perf_counter()
        with torch.no_grad():
            for x, y in batches:
                token_losses(plain.model, x, y)
        val_s.append(time.perf_counter() - t)
        plain.model.train()
    val, step = statistics.median(val_s), statistics.median(step_s)
    table.section(f"validation, lesson 002's model (profile=cpu, {o.threads} thread(s)): medians of {len(val_s)}, "
                  f"alternating with {per_round} training steps")
    table.add(f"one validation ({e.val_batches} batches of {e.val_batch_size} windows)", f"{val:.3f} s",
              f"{val / step:.1f} training steps of {1000 * step:.1f} ms")
    run = {n: steps * step + steps // n * val for n in (every, before)}
    table.add(f"validating every {every} steps, not {before}, over {steps:,}",
              f"+{100 * (run[every] / run[before] - 1):.1f}%", f"a run's training and validation time: "
              f"{run[every] / 60:.1f} min against {run[before] / 60:.1f} min")


def _warm_worker() -> int:
    """A worker's pid, once it has imported this module, and with it every import a run needs, before timing starts."""
    time.sleep(1.0)   # long enough that each warm-up task lands on its own worker
    return os.getpid()


def bench_suite(o: Options, table: Table, scratch: str) -> dict:
    """Base-config runs through the suite's own pool and job function: one worker on every core, runs one after
    another, against one single-threaded worker per core, runs side by side. Blocks alternate: A B A B."""
    cores = os.cpu_count() or 1
    steps, per_block = (100, cores) if o.quick else (300, cores)
    store = Store(f"sqlite:///{scratch}/suite.db")
    lock = os.path.join(scratch, "workers.lock")
    plans = {"serial": (1, cores), "side by side": (cores, 1)}
    pools = {k: LocalPool(w, t, lock) for k, (w, t) in plans.items()}
    rates: dict[str, list[float]] = {k: [] for k in plans}
    serial_s: dict[str, list[float]] = {k: [] for k in plans}
    try:
        for k, pool in pools.items():
            list(f.result() for f in [pool.submit(_warm_worker) for _ in range(pool.capacity)])
        blocks = 1 if o.quick else 2
        with progress(blocks * len(pools), "suite blocks") as bar:
            for block in range(blocks):
                for k, pool in pools.items():
                    jobs = []
                    for i in range(per_block):
                        cfg = config.load([f"train.steps={steps}", f"eval.every={steps}", f"seed={i}",
                                           f"runtime.threads={pool.threads}", "runtime.progress=false",
                                           f"tracking.uri={store.uri}", "tracking.experiment=suite"])
                        jobs.append((cfg, store.create_run("suite", f"{k}{block}-{i}", {})))
                    t = time.perf_counter()
                    futures = [pool.submit(run_job, cfg, run_id, None) for cfg, run_id in jobs]
                    results = [f.result() for f in futures]
                    wall = time.perf_counter() - t
                    bad = [r for r in results if r["status"] != "FINISHED"]
                    if bad:
                        raise RuntimeError(f"a bench suite run failed: {bad[0]}")
                    rates[k].append(per_block / wall * 3600)
                    serial_s[k].append(sum(r["seconds"] for r in results) / per_block)
                    bar.update()
    finally:
        for pool in pools.values():
            pool.shutdown()
    table.section(f"the suite: {per_block} base-config runs of {steps} steps a block, through its pool and job "
                  f"function, blocks alternating")
    out = {}
    for k, (w, t) in plans.items():
        out[k] = statistics.median(rates[k])
        table.add(f"{w} worker{'s' * (w > 1)} × {t} thread{'s' * (t > 1)} ({k})", f"{out[k]:.0f} runs/hour",
                  f"{statistics.median(serial_s[k]):.1f} s a run; blocks " + " ".join(f"{r:.0f}" for r in rates[k]))
    table.add("side by side / one after another", f"{out['side by side'] / out['serial']:.2f}×",
              "runs per hour")
    return out


_REPORT_PEAK = """
import atexit, re, sys
def report(path=sys.argv.pop(1)):
    with open('/proc/self/status') as f:
        peak = re.search(r'VmHWM:\\s+(\\d+)', f.read()).group(1)
    with open(path, 'w') as f:
        f.write(peak)
atexit.register(report)
"""


def peak_rss_mb(overrides: list[str], scratch: str, name: str, code: str = "") -> tuple[subprocess.Popen, str]:
    """Starts `python -m lm.commands.train` (or `python -c code`) in a process of its own, which writes its peak resident
    memory (VmHWM, its own since exec: a child's ru_maxrss starts at its parent's size) to a file as it exits."""
    env = {**os.environ, "TINYGPT_STORE": os.path.join(scratch, name)}
    out = os.path.join(scratch, f"{name}.peak")
    body = code or f"import runpy; sys.argv[0] = 'lm.train'; runpy.run_module('lm.commands.train', run_name='__main__')"
    p = subprocess.Popen([sys.executable, "-c", _REPORT_PEAK + body, out, *overrides], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return p, out


def wait_rss(started: tuple[subprocess.Popen, str]) -> float:
    p, out = started
    _, err = p.communicate()
    if p.returncode:
        raise RuntimeError(f"a memory run failed: {err.decode()[-2000:]}")
    with open(out) as f:
        return int(f.read()) / 1024


def bench_memory(o: Options, table: Table, scratch: str) -> None:
    n = 50 if o.quick else 200
    table.section(f"peak memory (RSS) of a whole `python -m lm.commands.train` run, 1 thread, validating every {n // 2} "
                  f"steps; the two step counts side by side")
    for label, extra in (("base config", []), ("n_layer=4 n_embd=128 (largest scaling variant)", LARGEST)):
        procs = [peak_rss_mb([f"train.steps={steps}", f"eval.every={n // 2}", "runtime.threads=1",
                              "runtime.progress=false", *extra], scratch, f"mem{steps}{len(extra)}")
                 for steps in (n, 2 * n)]
        a, b = (wait_rss(p) for p in procs)
        table.add(f"{label}: {n} → {2 * n} steps", f"{a:.0f} → {b:.0f} MB", f"{b - a:+.0f} MB")
    libraries = wait_rss(peak_rss_mb([], scratch, "imports", "import lm.run.train, lm.measures.probes, lm.heads.table"))
    table.add("of which the libraries, imported and nothing else", f"{libraries:.0f} MB")


# ---------------------------------------------------------------------------------------------------------------
# Output


def machine() -> str:
    name = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    return f"{name}, {os.cpu_count()} cores, torch {torch.__version__}"


class Table:
    def add(self, what: str, value: str, note: str = "") -> None:
        print(f"  {what:<56} {value:>15}  {note}".rstrip(), flush=True)

    def section(self, title: str) -> None:
        print(title, flush=True)


def main(argv: list[str] | None = None) -> int:
    o = parse(list(sys.argv[1:] if argv is None else argv))
    train.quiet()
    torch.set_num_threads(o.threads)
    cfg = config.load([])
    corpus = load_corpus(cfg.data)
    started = time.perf_counter()
    print(f"python -m lm.tools.bench {' '.join(sys.argv[1:] if argv is None else argv)}".rstrip()
          + f": {machine()}; {o.threads} thread(s); load average {load()} at the start", flush=True)
    table = Table()
    scratch = tempfile.mkdtemp(prefix="tinygpt-bench-")
    try:
        if "train" in o.only:
            bench_train(o, corpus, cfg, table, scratch)
        if "sample" in o.only:
            bench_sample(o, corpus, cfg, table)
        if "suite" in o.only:
            bench_suite(o, table, scratch)
        if "memory" in o.only:
            bench_memory(o, table, scratch)
        if "startup" in o.only:
            bench_process.startup(table, scratch, 1 if o.quick else 3)
        if "process" in o.only:
            bench_process.whole_run(table, scratch, o.steps, o.pairs)
        if "report" in o.only:  # the store's own runs: the full suite's, or with quick the quick suite's
            bench_process.report(table, scratch, 1 if o.quick else 3, o.quick)
        if "validation" in o.only:
            bench_validation(o, corpus, table)
        if "scale" in o.only:  # quick: 100 and 1,000 runs
            bench_scale.scale(table, scratch, bench_scale.SIZES[:2] if o.quick else bench_scale.SIZES)
        if "study" in o.only:
            bench_study.study(table, scratch, o.quick)
        if "whole" in o.only:
            bench_study.whole(table, scratch, o.quick)
        if "shared" in o.only:
            bench_shared.shared(table, scratch, o.quick, 1 if o.quick else 3)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{time.perf_counter() - started:.0f} s; load average {load()} at the end")
    return 0


def bench_train(o: Options, corpus, cfg, table: Table, scratch: str) -> None:
    flops = train_flops(cfg.model, cfg.train.batch_size)
    square = {s: _mm_rate(s, s, s) for s in (1024, 2048)}
    shapes = matmul_shapes(cfg.model, cfg.train.batch_size)
    rates = {sh: _mm_rate(*sh, seconds=0.05) * 1e9 for sh in set(shapes)}
    work = [2 * m * k * n for m, k, n in shapes]
    shaped = sum(work) / sum(w / rates[sh] for sh, w in zip(shapes, work)) / 1e9

    store = Store(f"sqlite:///{scratch}/mlflow.db")
    plain = PlainLoop(corpus, cfg)
    plain.run(o.warmup)
    _Interleaved.floors = {n: KernelFloor(cfg.model, cfg.train.batch_size, n, o.threads)
                           for n in sorted({1, o.threads})}
    chunk = _Interleaved.chunk
    cache_dir = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"torchinductor_{os.environ.get('USER') or os.getuid()}")
    warm_cache = os.path.isdir(cache_dir)
    runs = {}
    options = {"default": [], "compiled": COMPILED, "fast": FAST}
    with progress(len(options) * o.chunks, "training chunks, harness against plain") as _Interleaved.bar:
        for name, overrides in options.items():
            runs[name] = harness_run(corpus, store, [f"runtime.threads={o.threads}", *overrides], plain, o.warmup,
                                     o.chunks, name)
    probes = [r for rec, _ in runs.values() for r in rec.mm_rates]
    peak = statistics.median(probes)
    table.section(f"fp32 matmul (torch.mm), {o.threads} thread(s)")
    table.add("1024³, between the training chunks below", f"{peak:.0f} GFLOP/s",
              f"the rate MFU divides by; median of {len(probes)}")
    for size, rate in square.items():
        table.add(f"{size}³, before them", f"{rate:.0f} GFLOP/s")
    table.add(f"the step's {len(set(shapes))} matmul shapes, FLOP-weighted, before them", f"{shaped:.0f} GFLOP/s")
    table.add("model FLOPs per training step", f"{flops / 1e9:.3f} GFLOP", "6·N·B·T + 12·L·B·T²·d, "
              "N = 12·L·d² + V·d, the matmul weights")

    def mfu(ms):
        return flops / (ms / 1000) / (peak * 1e9)

    for n in _Interleaved.floors:
        ms = 1000 * statistics.median([t for rec, _ in runs.values() for t in rec.floor_s[n]])
        how = f"{o.threads} thread(s) each" if n == 1 else f"a shard a thread, {n} side by side"
        table.add(f"its matmuls and attention alone, between them: {how}", f"{ms:.2f} ms",
                  f"MFU {mfu(ms):.2f} at most, with these kernels")

    table.section(f"training, base config, {o.threads} thread(s): ms/step, medians of {o.chunks} chunks of {chunk} "
                  f"steps after {o.warmup}, the plain loop's chunks between the harness's")
    pooled = 1000 * statistics.median([s for rec, _ in runs.values() for s in rec.plain_s])
    table.add("plain PyTorch loop, all its chunks", f"{pooled:.2f} ms", f"MFU {mfu(pooled):.2f}")
    labels = {"default": "harness, default options",
              "compiled": "harness, " + " ".join(f.split(".", 1)[1] for f in COMPILED),
              "fast": "harness, " + " ".join(f.split(".", 1)[1] for f in FAST)}
    for name, (rec, result) in runs.items():
        ms, beside = 1000 * statistics.median(rec.harness), 1000 * statistics.median(rec.plain_s)
        # each harness chunk against the plain chunks on either side of it
        ratios = sorted(h / ((a + b) / 2) for h, a, b in zip(rec.harness, rec.plain_s, rec.plain_s[1:]))
        target = {"default": " (target ≤ 1.05)", "fast": " (target ≤ 0.8)"}.get(name, "")
        table.add(labels[name], f"{ms:.2f} ms", f"plain beside it {beside:.2f} ms; ratio {statistics.median(ratios):.3f}"
                  f"{target}, chunks {ratios[0]:.2f}–{ratios[-1]:.2f}; MFU {mfu(ms):.2f} against {mfu(beside):.2f}"
                  + (" (target ≥ 0.65)" if name == "fast" else ""))
    table.add("first step of the compiled run", f"{runs['compiled'][0].first_step_s:.1f} s",
              f"compilation; inductor cache {'warm' if warm_cache else 'cold'} ({cache_dir})")
    d = runs["default"][1]["val_loss"]
    table.add(f"val loss after {o.warmup + o.chunks * chunk} steps (same seed, same batches)", f"{d:.4f}",
              "default options; " + ", ".join(f"{labels[k].split(', ', 1)[1]} {runs[k][1]['val_loss'] - d:+.5f}"
                                              for k in ("compiled", "fast")))


if __name__ == "__main__":
    sys.exit(main())
