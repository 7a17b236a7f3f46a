"""What the reliability tests share: the suite and `lm.commands.train` as a user starts them (their own process group, as a
terminal gives them), faults injected through lm/faults.py, and an audit of a store read back through MLflow."""
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock
from mlflow.tracking import MlflowClient

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "test-artifacts" / "reliability.json"
# The test session the figures are of: the one id pytest-xdist gives all of a run's workers, or this process's.
SESSION = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex
# The kill loop's suite: three exercises at toy size (one reads another's models), six runs.
QUICK = ["quick=true", "ablations=[nomask,temperature]"]
# One run of `lm.commands.train` at toy size: 30 steps, validation every 10.
TINY = ["train.steps=30", "eval.every=10", "eval.val_batches=2", "eval.val_batch_size=16", "eval.head_windows=8",
        "sample.length=50", "runtime.progress=false", "runtime.threads=1", "tracking.experiment=tiny"]
# Required of every finished run, whatever it is.
REQUIRED = ("val_loss", "val_perplexity", "n_params", "uniform_loss", "bigram_loss", "probe_top1_p", "word_validity")


def env(store: Path, **extra) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items()
         if k not in ("MLFLOW_TRACKING_URI", "TINYGPT_FAULT", "TINYGPT_FAULT_ROOT", "TINYGPT_FAULT_MARK",
                      "TINYGPT_FAULT_LOG")}
    e.update(TINYGPT_STORE=str(store), PYTHONPATH=str(ROOT), MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR="false")
    e.update({k: str(v) for k, v in extra.items()})
    return e


@dataclass
class Outcome:
    rc: int
    out: str
    err: str
    fired: list[str] = field(default_factory=list)  # the faults lm/faults.py fired in it, as it logged them
    pgid: int = 0
    seconds: float = 0.0
    fault: str | None = None
    workers: int = 0
    survivors: list[str] = field(default_factory=list)  # its processes still alive some seconds after it ended
    running: list[str] = field(default_factory=list)    # child runs it left RUNNING

    @property
    def killed(self) -> bool:
        return self.rc == -signal.SIGKILL

    def lines(self) -> list[str]:
        return [ln for ln in self.err.splitlines() if ln.strip()]


def start(module: str, args: list[str], store: Path, fault: str | None = None, **extra) -> tuple:
    log = Path(tempfile.mkstemp(prefix="faults-", suffix=".log")[1])
    e = env(store, **extra)
    if fault:
        e.update(TINYGPT_FAULT=fault, TINYGPT_FAULT_LOG=str(log))
    p = subprocess.Popen([sys.executable, "-m", module, *args], cwd=ROOT, env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    return p, log


def finish(p: subprocess.Popen, log: Path, timeout: float = 400, t0: float | None = None) -> Outcome:
    t0 = t0 or time.time()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError(f"{p.args} ran past {timeout}s:\n{out[-3000:]}\n{err[-3000:]}") from None
    fired = [ln for ln in log.read_text().splitlines() if ln.strip()]
    log.unlink(missing_ok=True)
    return Outcome(p.returncode, out, err, fired, p.pid, time.time() - t0)


def run(module: str, args: list[str], store: Path, fault: str | None = None, timeout: float = 400,
        **extra) -> Outcome:
    t0 = time.time()
    p, log = start(module, args, store, fault, **extra)
    return finish(p, log, timeout, t0)


def survivors(pgid: int) -> list[str]:
    """Live processes (zombies aside) still in a process group: what a killed suite left running."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        rest = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, ...
        if int(rest[2]) == pgid and rest[0] not in ("Z", "X"):
            found.append(f"{stat.parent.name} {text[:text.rindex(')') + 1]}")
    return found


def wait_for_group(pgid: int, timeout: float = 15) -> list[str]:
    deadline = time.time() + timeout
    while (left := survivors(pgid)) and time.time() < deadline:
        time.sleep(0.2)
    return left


def running_children(store: Path) -> list[str]:
    if not (store / "mlflow.db").exists():
        return []
    client = MlflowClient(uri(store))
    return [r.info.run_id for e in client.search_experiments() for r in client.search_runs([e.experiment_id])
            if r.info.status == "RUNNING" and r.data.tags.get("role") != "exercise"]


def uri(store: Path) -> str:
    return f"sqlite:///{store}/mlflow.db"


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under a folder with its size and modification time: equal snapshots, an untouched store."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def expected_jobs(args: list[str]) -> dict[tuple[str, str, str], object]:
    """(experiment, variant, seed) → the job's config, for the runs a suite command asks for."""
    from lm.suite import load_suite_config, plan

    jobs = plan(load_suite_config(args)).jobs
    return {(j.experiment, j.spec.variant, str(j.spec.seed)): j.cfg for j in jobs}


@dataclass
class Audit:
    runs: int = 0
    finished: int = 0
    running: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)            # asked for, but no FINISHED run
    duplicate_runs: list[str] = field(default_factory=list)  # more than one run for one (variant, seed)
    duplicate_points: list[str] = field(default_factory=list)  # a metric logged twice at one step
    damaged: list[str] = field(default_factory=list)         # finished, but a metric, curve or artifact is wrong
    val_loss: dict = field(default_factory=dict)             # (experiment, variant, seed) → final val_loss
    curves: dict = field(default_factory=dict)               # (experiment, variant, seed) → {metric: [(step, value)]}

    @property
    def problems(self) -> list[str]:
        return [*self.running, *self.lost, *self.duplicate_runs, *self.duplicate_points, *self.damaged]


def audit(store: Path, args: list[str], artifacts: bool = True) -> Audit:
    """The store after a suite command, checked run by run against what the command asks for."""
    from lm.model import checkpoint

    want = expected_jobs(args)
    client = MlflowClient(uri(store))
    a = Audit()
    by_key: dict = {}
    for exp in client.search_experiments():
        for r in client.search_runs([exp.experiment_id], max_results=10000):
            a.runs += 1
            name = f"{exp.name}/{r.info.run_name} ({r.info.run_id[:8]})"
            if r.info.status == "RUNNING":
                a.running.append(f"stuck RUNNING: {name}")
            if r.data.tags.get("role") == "exercise":
                continue
            by_key.setdefault((exp.name, r.data.tags.get("variant"), r.data.tags.get("seed")), []).append(r)
    for key, cfg in want.items():
        runs = by_key.get(key, [])
        finished = [r for r in runs if r.info.status == "FINISHED"]
        if len(runs) > 1:
            a.duplicate_runs.append(f"{len(runs)} runs for {key}: {[r.info.status for r in runs]}")
        if not finished:
            a.lost.append(f"no finished run for {key}: {[r.info.status for r in runs]}")
            continue
        a.finished += 1
        r = finished[0]
        a.damaged += [f"{key}: {m}" for m in _check_run(client, r, cfg, a, key, artifacts, checkpoint)]
    a.duplicate_runs += [f"a run nobody asked for: {k}" for k in by_key if k not in want]
    return a


def _check_run(client, r, cfg, a: Audit, key, artifacts: bool, checkpoint) -> list[str]:
    bad = []
    run_id, m = r.info.run_id, r.data.metrics
    for k in REQUIRED:
        if k not in m or not math.isfinite(m[k]):
            bad.append(f"metric {k} missing or not finite")
    trained = "init_from_run" not in r.data.tags
    curves = {}
    for k in m:
        history = client.get_metric_history(run_id, k)
        twice = [s for s, n in Counter(p.step for p in history).items() if n > 1]
        if twice:
            a.duplicate_points.append(f"{key}: {k} logged twice at steps {sorted(twice)[:10]}")
        curves[k] = sorted((p.step, p.value) for p in history)
    a.curves[key] = curves
    a.val_loss[key] = m.get("val_loss")
    n, every = cfg.train.steps, cfg.eval.every
    if trained:
        steps = [s for s, _ in curves.get("train_loss", [])]
        if sorted(set(steps)) != list(range(1, n + 1)):
            bad.append(f"train_loss has {len(set(steps))} of steps 1..{n}")
        want_val = sorted({0, n, *range(every, n + 1, every)})
        if sorted({s for s, _ in curves.get("val_loss", [])}) != want_val:
            bad.append(f"val_loss at steps {sorted({s for s, _ in curves.get('val_loss', [])})}, not {want_val}")
        for k in ("ms_per_step", "tokens_per_s"):
            if k not in m:
                bad.append(f"metric {k} missing")
    if artifacts:
        names = {f.path for f in client.list_artifacts(run_id)}
        missing = {"model.pt", "samples.txt", "heads.csv", "probe.json", "attention.json"} - names
        if missing:
            bad.append(f"artifacts missing: {sorted(missing)}")
        else:
            with tempfile.TemporaryDirectory() as tmp:
                path = client.download_artifacts(run_id, "model.pt", tmp)
                try:
                    checkpoint.load(Path(path), expect=cfg.model)
                except checkpoint.CheckpointError as e:
                    bad.append(f"model.pt: {e}")
    return bad


def record(section: str, **figures) -> None:
    """Adds figures to test-artifacts/reliability.json, which `make reliability` prints: this test session's alone (a
    file an earlier session left is started afresh), under a lock, since `make test`'s workers share the file."""
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{FIGURES}.lock"):
        data = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
        if data.get("session") != SESSION:
            data = {"session": SESSION}
        data.setdefault(section, {}).update(figures)
        FIGURES.write_text(json.dumps(data, indent=2, sort_keys=True))
