"""`make gpu-check`: the CUDA path checked and timed against nanoGPT, in one go on a lent GPU.

    python -m lm.tools.gpucheck [quick=true] [runtime.accelerator=cuda|cpu] [only=env,numerics,suite,gpu,large]
                          [large_seconds=180]

The steps, in this order whatever `only` names (the checks before the timings, so a lease cut short still says
whether the harness works there):
1. env: nvidia-smi, torch's CUDA version, the matmul rate measured here (TFLOP/s) in the dtype the runs compute
   in (bf16 on CUDA, fp32 on the CPU); each run's peak memory.
2. numerics: the base config for 300 steps in exact fp32 (TF32 off) on the accelerator against the CPU, same seed:
   the validation losses agree within 0.02.
3. suite: the quick suite and its report with the accelerator asked for by name, so nothing falls back silently.
4. gpu: `profile=gpu`, 3,000 steps with bf16 and torch.compile: validation loss, tokens/s, ms/step, MFU against
   that measured rate; then the same run on this machine's CPU cores for as many seconds, for the ratio.
5. large: `profile=large` (nanoGPT's shakespeare-char baseline) for as many of its 5,000 steps as fit in
   large_seconds, validating every 250 steps; its best validation loss against nanoGPT's best, 1.4697.
Prints one Markdown table of the figures and writes it, with the figures as JSON and the report, to $OUT when it is
set (else to reports/gpu-check/), after every step: a command cut off at its limit keeps the steps it finished.
On an H200, env, gpu and large take most of a 10-minute command: where a command is limited to 10 minutes, run `only=env,numerics,suite` and `only=gpu,large` apart. `quick=true` runs every step at toy size: with
runtime.accelerator=cpu, the whole script runs on a machine without a GPU (uncompiled), which is how the tests run
it. Runs go to a scratch MLflow store. The options: lm/settings/options.py's GpuCheckOptions.
"""
from __future__ import annotations

import sys

if __name__ == "__main__":  # the options checked before torch loads
    from lm.settings import options
    options.exit_if_wrong(options.GpuCheckOptions, sys.argv[1:])

import contextlib
import io
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytorch_lightning as pl
import torch

from lm.model.data import prepare
from lm.run import devices, train
from lm.settings import config
from lm.settings.errors import ConfigError
from lm.settings.options import GpuCheckOptions, Step
from lm.settings.options import parse as parse_options
from lm.tools.bench import train_flops
from lm.tracking.store import Store, every_experiment, every_run

NUMERICS_TOLERANCE = 0.02   # fp32 on CUDA and on the CPU, same seed, 300 steps
# nanoGPT's README, shakespeare-char: "the best validation loss is 1.4697", its best checkpoint's, not the last's
# (ours on an H200: docs/notebook.md)
NANOGPT_LARGE = 1.4697
# Toy size for `quick`: every code path, in seconds on a CPU.
TOY = ["model.n_layer=1", "model.n_embd=32", "model.n_head=2", "model.block_size=32", "train.batch_size=8",
       "eval.val_batches=2", "eval.val_batch_size=8", "eval.head_windows=4", "eval.honest_windows=4",
       "sample.length=20"]


@dataclass
class Options:
    """The options as the steps read them (GpuCheckOptions, parsed)."""
    quick: bool
    accelerator: str
    only: tuple[str, ...]
    large_seconds: float
    out: Path = field(default_factory=lambda: Path(os.environ.get("OUT") or "reports/gpu-check"))

    def steps(self, full: int, toy: int) -> int:
        return toy if self.quick else full


def parse(argv: list[str]) -> Options:
    g = parse_options(GpuCheckOptions, argv)
    seconds = 3.0 if g.quick and g.large_seconds == GpuCheckOptions.large_seconds else g.large_seconds
    return Options(g.quick, g.runtime.accelerator.value, tuple(s.value for s in g.only), seconds)


class Table:
    """The figures, as rows of one Markdown table, printed as they come."""

    def __init__(self):
        self.rows: list[tuple[str, str, str, str]] = []

    def add(self, step: str, what: str, value: str, note: str = "") -> None:
        self.rows.append((step, what, value, note))
        print(f"  {step:<9} {what:<44} {value:>14}  {note}".rstrip(), flush=True)

    def markdown(self) -> str:
        lines = ["| step | what | value | note |", "|---|---|---|---|"]
        return "\n".join(lines + [f"| {' | '.join(c.replace('|', '/') for c in row)} |" for row in self.rows]) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# Measuring

def compute_dtype(accelerator: str) -> torch.dtype:
    """The dtype a run's matmuls compute in at runtime.precision=auto: MFU's peak is that dtype's rate. (A CPU
    without bf16 instructions emulates them: CI's measured 1.3 GFLOP/s in bf16, so a fp32 run there scored MFU 2.96
    against it.)"""
    precision = devices.select(accelerator)[1]
    return {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}.get(precision, torch.float32)


def matmul_rate(device: str, size: int, dtype: torch.dtype, seconds: float = 1.0) -> float:
    """FLOP/s of size × size matmuls in dtype on the device: the peak MFU divides by, so the fastest batch of 10
    within `seconds`, not their mean: on a shared CPU the mean falls below what a run then reaches (an MFU over 1)."""
    a, b = (torch.randn(size, size, device=device, dtype=dtype) for _ in range(2))

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    for _ in range(3):
        a @ b
    sync()
    fastest, start = float("inf"), time.perf_counter()
    while time.perf_counter() - start < seconds:
        t = time.perf_counter()
        for _ in range(10):
            a @ b
        sync()
        fastest = min(fastest, time.perf_counter() - t)
    return 2 * size ** 3 * 10 / fastest


def peak_rate(o: Options) -> float:
    """The rate MFU divides by: square matmuls (256 wide in `quick`, else 8192) in the runs' dtype. On the CPU, one
    thread's rate times the threads: threads that wait on each other at every matmul measure a fraction of what a
    run then reaches on a busy machine (an MFU over 1)."""
    size, dtype, seconds = 256 if o.quick else 8192, compute_dtype(o.accelerator), 0.2 if o.quick else 2.0
    if o.accelerator != "cpu":
        return matmul_rate(o.accelerator, size, dtype, seconds)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return matmul_rate("cpu", size, dtype, seconds) * threads
    finally:
        torch.set_num_threads(threads)


class Deadline(pl.Callback):
    """Ends training once `seconds` of it have passed (the steps that fit), and times the steady steps: those
    after the first WARMUP (compiling, allocating), none with a validation in it. Handed to the run through
    train.execute's callbacks."""
    WARMUP = 10

    def __init__(self, seconds: float = float("inf")):
        self.seconds = seconds
        self.steps_done, self.steady, self.prev = 0, [], None

    def on_train_start(self, trainer, pl_module):
        self.started = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        now, self.steps_done = time.perf_counter(), trainer.global_step
        if self.prev is not None and self.steps_done > self.WARMUP:
            self.steady.append(now - self.prev)
        self.prev = now
        if now - self.started > self.seconds:
            trainer.should_stop = True

    def on_validation_start(self, trainer, pl_module):
        self.prev = None

    def steady_ms(self, average_ms: float) -> float:
        """ms per steady step; the run's average (compiling included) when it had none."""
        return 1000 * sum(self.steady) / len(self.steady) if self.steady else average_ms


def run(store: Store, name: str, overrides: list[str], seconds: float = float("inf")) -> dict:
    """One run through the harness's own code, in this process: its figures, the steps it did, its peak memory."""
    cfg = config.load([*overrides, "runtime.progress=false", f"tracking.uri={store.uri}",
                       "tracking.experiment=gpu-check"])
    corpus = prepare(cfg)
    accelerator = cfg.runtime.accelerator
    if accelerator == "cuda":
        torch.cuda.reset_peak_memory_stats()
    run_id = store.create_run("gpu-check", name, {"config_hash": cfg.config_hash, "seed": cfg.seed})
    recorder = Deadline(seconds)
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        result = train.execute(cfg, corpus, store, run_id, callbacks=[recorder])
    if result["status"] != "FINISHED":
        raise RuntimeError(f"{name}: the run {result['status']}: {result.get('reason')}")
    done = recorder.steps_done
    curve = [(m.step, m.value) for m in store.client.get_metric_history(run_id, "val_loss") if m.step < done]
    steady = recorder.steady_ms(result.get("ms_per_step", 0.0))
    return {**{k: v for k, v in result.items() if isinstance(v, (int, float))}, "cfg": cfg, "steps_done": done,
            "steady_ms": steady, "steady_tokens_per_s": cfg.train.batch_size * cfg.model.block_size * 1000 / steady,
            "seconds": time.perf_counter() - t,
            "val_curve": [*sorted(curve), (done, result["val_loss"])],  # the end's, logged at train.steps
            "peak_mb": (torch.cuda.max_memory_allocated() if accelerator == "cuda"
                        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024) / 2 ** 20}


def memory(r: dict, accelerator: str) -> str:
    return f"peak {'GPU memory' if accelerator == 'cuda' else 'RSS of this process so far'} {r['peak_mb']:,.0f} MB"


# ---------------------------------------------------------------------------------------------------------------
# The five steps, in the order they run

def check_env(o: Options, table: Table, figures: dict) -> None:
    try:
        smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        smi = ""
    (o.out / "nvidia-smi.txt").write_text(smi or "nvidia-smi: not found\n")
    gpu = torch.cuda.get_device_name() if o.accelerator == "cuda" else "none (runtime.accelerator=cpu)"
    table.add("env", "GPU", gpu, "nvidia-smi.txt" if smi else "no nvidia-smi")
    table.add("env", "torch, its CUDA", f"{torch.__version__}", f"CUDA {torch.version.cuda or 'none'}")
    rate = figures["matmul_flops"] = peak_rate(o)
    table.add("env", f"{str(compute_dtype(o.accelerator)).removeprefix('torch.')} matmul rate, measured",
              f"{rate / 1e12:.3g} TFLOP/s",
              f"{256 if o.quick else 8192}³ torch.matmul on {o.accelerator}: the rate MFU divides by")


def check_numerics(o: Options, store: Store, table: Table, figures: dict) -> None:
    steps = o.steps(300, 10)
    args = [f"train.steps={steps}", f"eval.every={steps}", "runtime.precision=32-true", "seed=0",
            *(TOY if o.quick else [])]
    there = run(store, f"fp32 on {o.accelerator}", [*args, f"runtime.accelerator={o.accelerator}"])
    here = run(store, "fp32 on the CPU", [*args, "runtime.accelerator=cpu"])
    gap = abs(there["val_loss"] - here["val_loss"])
    verdict = "agree" if gap <= NUMERICS_TOLERANCE else "DISAGREE"
    table.add("numerics", f"base config, {steps} steps, fp32: {o.accelerator} against the CPU",
              f"|Δ| {gap:.4f}", f"{there['val_loss']:.4f} against {here['val_loss']:.4f}: {verdict} "
              f"(tolerance {NUMERICS_TOLERANCE})")
    figures["numerics"] = {"there": there["val_loss"], "cpu": here["val_loss"], "gap": gap,
                           "agree": gap <= NUMERICS_TOLERANCE}


def check_suite(o: Options, table: Table, figures: dict, scratch: Path) -> None:
    """The quick suite and the report as a user starts them, in their own processes, on the accelerator by name."""
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env["TINYGPT_STORE"] = str(scratch / "suite")
    chosen = ["ablations=[baseline]"] if o.quick else []
    commands = {"make ablations-quick": [sys.executable, "-m", "lm.commands.suite", "quick=true", *chosen,
                                        f"runtime.accelerator={o.accelerator}", *(TOY if o.quick else [])],
                "make report": [sys.executable, "-m", "analysis.report", "quick=true", *chosen,
                                f"out={o.out / 'report'}"]}
    for what, command in commands.items():
        t = time.perf_counter()
        p = subprocess.run(command, env=env, capture_output=True, text=True)
        (o.out / f"{what.split()[-1]}.log").write_text(p.stdout + p.stderr)
        if p.returncode != 0:
            raise RuntimeError(f"{what} with runtime.accelerator={o.accelerator} exited {p.returncode}: "
                               f"{(p.stderr.strip().splitlines() or [''])[-1]}")
        table.add("suite", what, f"{time.perf_counter() - t:.0f} s", f"exit 0 with runtime.accelerator={o.accelerator}")
    store = Store(f"sqlite:///{scratch / 'suite' / 'mlflow.db'}")
    runs = [r for r in every_run(store.client, [e.experiment_id for e in every_experiment(store.client)])
            if "runtime.accelerator" in r.data.tags]  # the runs, not their exercises' parent runs
    elsewhere = [r.info.run_id for r in runs if r.data.tags["runtime.accelerator"] != o.accelerator]
    unfinished = [r.info.run_id for r in runs if r.info.status != "FINISHED"]
    if not runs or elsewhere or unfinished:
        raise RuntimeError(f"the quick suite: {len(runs)} runs, {len(elsewhere)} on another accelerator, "
                           f"{len(unfinished)} not FINISHED")
    table.add("suite", "runs trained", f"{len(runs)} FINISHED", f"every one on {o.accelerator}, none elsewhere")
    figures["suite_runs"] = len(runs)


def check_gpu_profile(o: Options, store: Store, table: Table, figures: dict) -> None:
    steps = o.steps(3000, 15)
    args = ["profile=gpu", f"train.steps={steps}", f"eval.every={o.steps(300, 5)}", *(TOY if o.quick else [])]
    # compiled, but not in `quick`: on a CPU, compiling takes minutes, longer than the toy run it would speed up
    r = run(store, "profile=gpu", [*args, f"runtime.accelerator={o.accelerator}", f"runtime.compile={not o.quick}"])
    rate = figures.get("matmul_flops") or peak_rate(o)
    mfu = train_flops(r["cfg"].model, r["cfg"].train.batch_size) / (r["steady_ms"] / 1000) / rate
    table.add("gpu", f"profile=gpu, {steps:,} steps{'' if o.quick else ', compiled'}", f"val loss {r['val_loss']:.3f}",
              f"{r['seconds']:.0f} s in all; {memory(r, o.accelerator)}")
    table.add("gpu", "its speed, steady", f"{r['steady_ms']:.2f} ms/step",
              f"{r['steady_tokens_per_s']:,.0f} tokens/s; MFU {mfu:.2f} against the measured matmul rate; "
              f"{r['ms_per_step']:.2f} ms/step over the whole run, compiling included")
    # The same run on the CPU cores for as many seconds as the accelerator trained: how far the CPU gets.
    cpu = run(store, "profile=gpu on the CPU", [*args, "runtime.accelerator=cpu"], seconds=r["seconds"])
    table.add("gpu", f"the same on {os.cpu_count()} CPU cores, {r['seconds']:.0f} s",
              f"{cpu['steady_ms']:.2f} ms/step", f"{cpu['steps_done']:,} steps, uncompiled; the accelerator "
              f"{cpu['steady_ms'] / r['steady_ms']:.1f}× faster a steady step; {memory(cpu, 'cpu')}")
    figures["gpu"] = {k: v for k, v in r.items() if k != "cfg"} | {"mfu": mfu, "cpu_ms_per_step": cpu["steady_ms"],
                                                                   "cpu_steps_done": cpu["steps_done"]}


def check_large_profile(o: Options, store: Store, table: Table, figures: dict) -> None:
    steps, every = 5000, o.steps(250, 10)  # `quick` too: its toy runs stop at their deadline, as the real one may
    r = run(store, "profile=large", ["profile=large", f"train.steps={steps}", f"eval.every={every}",
                                     f"runtime.accelerator={o.accelerator}", *(TOY if o.quick else [])],
            seconds=o.large_seconds)
    curve = ", ".join(f"{s}: {v:.3f}" for s, v in r["val_curve"])
    best_step, best = min(r["val_curve"], key=lambda point: point[1])
    table.add("large", f"profile=large, {r['steps_done']:,} of {steps:,} steps in {o.large_seconds:.0f} s",
              f"val loss {r['val_loss']:.3f}", f"{r['steady_ms']:.1f} ms/step; {memory(r, o.accelerator)}")
    table.add("large", "its best validation loss", f"{best:.3f} at {best_step:,}",
              f"nanoGPT's best: {NANOGPT_LARGE} (its README, one A100)")
    table.add("large", f"validation loss every {every} steps", f"{len(r['val_curve'])} points", curve)
    figures["large"] = {k: v for k, v in r.items() if k != "cfg"} | {"best_val_loss": best, "best_step": best_step}


def write(o: Options, table: Table, figures: dict) -> None:
    """The table and the figures so far, to $OUT."""
    (o.out / "gpu-check.md").write_text(table.markdown())
    (o.out / "gpu-check.json").write_text(json.dumps(figures, indent=2, default=str))


def main(argv: list[str] | None = None) -> int:
    try:
        o = parse(list(sys.argv[1:] if argv is None else argv))
        devices.select(o.accelerator)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    train.quiet()
    warnings.filterwarnings("ignore", message="GPU available but not used")  # the CPU runs here are on purpose
    o.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    print(f"gpu-check on {o.accelerator}{' (quick: toy size)' if o.quick else ''}: {', '.join(o.only)}", flush=True)
    table, figures = Table(), {}
    scratch = Path(tempfile.mkdtemp(prefix="tinygpt-gpucheck-"))
    store = Store(f"sqlite:///{scratch / 'mlflow.db'}")
    failed = []
    steps = {Step.ENV: lambda: check_env(o, table, figures),
             Step.NUMERICS: lambda: check_numerics(o, store, table, figures),
             Step.SUITE: lambda: check_suite(o, table, figures, scratch),
             Step.GPU: lambda: check_gpu_profile(o, store, table, figures),
             Step.LARGE: lambda: check_large_profile(o, store, table, figures)}
    try:
        for step in (s for s in Step if s.value in o.only):
            try:  # one step that breaks must not cost the others' figures: the device time is short
                steps[step]()
            except Exception as e:
                failed.append(step.value)
                table.add(step.value, "FAILED", type(e).__name__, str(e).splitlines()[0][:300] if str(e) else "")
            write(o, table, figures)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    table.add("all", "device time", f"{time.perf_counter() - started:.0f} s", f"on {o.accelerator}")
    write(o, table, figures)
    print("\n" + table.markdown() + f"\nwritten to {o.out}/gpu-check.md", flush=True)
    agree = figures.get("numerics", {}).get("agree", True)
    return 1 if failed or not agree else 0


if __name__ == "__main__":
    sys.exit(main())
