"""`make ablations`: every exercise's runs, several seeds each, tracked in MLflow, resumable and parallel.

    python -m lm.commands.suite [ablations=[nomask,heads]] [seeds=1] [quick=true] [workers=2] [train.lr=0.01 ...]

Each exercise is an MLflow experiment holding one parent run with a child run per (variant, seed). A child
whose config hash already FINISHED is skipped; one left RUNNING, KILLED or FAILED by a crash is trained again
in place, from its last checkpoint. A run that diverged stays FAILED, with its reason.
"""
import fcntl
import hashlib
import re
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any, Callable

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException
from tqdm import tqdm

from lm.run import devices
from lm.spec import config, exercises
from lm.spec.config import ConfigError, RunConfig
from lm.spec.errors import DataError
from lm.spec.exercises import Exercise, RunSpec
from lm.suite import launchers, measuring
from lm.suite.launchers import LauncherConfig, WorkerDied
from lm.suite.launchers.local import worker_slot
from lm.tracking import aggregates, views

DEFAULT_SEEDS = 3  # per variant: the fewest a firm verdict needs (analysis/verdicts/decision.py's MIN_SEEDS)
QUICK_OVERRIDES = [  # toy size: every code path, in seconds
    "train.steps=20", "eval.every=10", "eval.val_batches=2", "eval.val_batch_size=16", "eval.honest_windows=8",
    "eval.head_windows=8", "eval.final_windows=64", "sample.length=100", "sample.count=2",
]


@dataclass
class SuiteConfig:
    """The suite's settings as conf/suite.yaml declares them and the command line overrides them."""
    ablations: Any = "all"      # all, or a list of exercise names
    seeds: int | None = None    # per variant; None: 3, quick runs 1
    quick: bool = False
    workers: int = 0            # 0: chosen for the machine
    threads: int = 0            # per run; 0: one, whatever the worker count (it changes a run's floats)
    overrides: list[str] = field(default_factory=list)  # applied to every run
    tracking_uri: str | None = None
    launcher: LauncherConfig = field(default_factory=LauncherConfig)
    # exercise/variant names: only their runs (and the runs of the exercise they read, init_from), the rest of each
    # exercise left as it is; how `make decide` adds seeds to exactly the variants its claims read
    variants: list[str] = field(default_factory=list)

    @property
    def per_variant(self) -> int:
        """The seeds each variant gets, unless its exercise asks for more."""
        return self.seeds or (1 if self.quick else DEFAULT_SEEDS)

    def __post_init__(self):
        if self.seeds is not None and self.seeds <= 0:
            raise ValueError(f"seeds={self.seeds} must be positive")
        if self.workers < 0 or self.threads < 0:
            raise ValueError("workers and threads must be 0 (automatic) or more")


@dataclass
class SuiteSpec(SuiteConfig):
    """A suite as a caller asks for it: its settings (SuiteConfig's), and what only Python can hand over."""
    exercises: list[Exercise] = field(default_factory=list)  # the caller's own (a sweep's grid), instead of ablations'
    files: dict[str, str] = field(default_factory=dict)      # text files, by name, logged on each exercise's parent run

    def settings(self) -> SuiteConfig:
        """Its settings alone, as conf/suite.yaml holds them (what --cfg prints)."""
        return SuiteConfig(**{f.name: getattr(self, f.name) for f in fields(SuiteConfig)})


class State(Enum):
    """Where a job stands in this suite."""
    PENDING = "pending"     # to run
    FINISHED = "finished"   # finished before this suite began
    DONE = "done"           # finished by this suite (trained, or copied from its twin)
    FAILED = "failed"
    KILLED = "killed"
    SKIPPED = "skipped"     # never started: the run whose models it reads did not finish

    @property
    def succeeded(self) -> bool:
        return self in (State.FINISHED, State.DONE)

    @property
    def gave_up(self) -> bool:
        return self in (State.FAILED, State.KILLED, State.SKIPPED)


@dataclass
class Job:
    spec: RunSpec
    cfg: RunConfig
    experiment: str
    config_hash: str            # computed once: hashing the whole config takes 0.1 to 0.5 ms
    run_id: str | None = None   # created when the run starts (open_run), so that its MLflow duration is its own
    parent: "Parent | None" = None   # the exercise's parent run
    state: State = State.PENDING
    result: dict = field(default_factory=dict)
    twin: "Job | None" = None   # a run of the same config in another exercise: its results are copied, not retrained
    found: Any = None           # the MLflow run it had finished as (or diverged in) before this suite began
    tags: dict = field(default_factory=dict)  # its run's own, beside child_tags' (lm/suite/measuring.py's)

    @property
    def cost(self) -> float:
        """Roughly the multiply-adds of training, steps × tokens × (parameters + attention), plus what every run
        does besides (samples, head statistics, artifacts) and the honest loss's many short forward passes, in
        the same units as fitted to the run times of a full suite here; for the suite's order and its ETA."""
        m, t, e = self.cfg.model, self.cfg.train, self.cfg.eval
        if self.twin is not None:
            return 0.0
        fixed = 6e10 + (t.steps // e.every + 1) * 1.4e10 * e.honest
        if self.spec.init_from:
            return fixed
        return fixed + t.steps * t.batch_size * m.block_size * (12 * m.n_layer * m.n_embd ** 2
                                                                + m.n_layer * m.block_size * m.n_embd)


def load_suite_config(argv: list[str]) -> SuiteSpec:
    """The spec of the suite a command line asks for: suite keys (seeds=1, launcher=slurm) configure the suite; any
    other override (train.lr=0.01) goes to every run, like the entries of overrides=[...]."""
    suite_keys = [f.name for f in fields(SuiteConfig)]
    own = [a for a in argv if a.lstrip("+~").split("=")[0].split(".")[0] in suite_keys]
    for word in argv:   # a key neither the suite's nor a run's: the suite's option misspelt, before any run is blamed
        if problem := config.unknown_suite_word(word, suite_keys):
            raise ConfigError(problem)
    raw = config.compose_dict(own, "suite")
    try:
        s = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(SuiteConfig), raw))
    except OmegaConfBaseException as e:
        raise ConfigError(config.one_line(e, SuiteConfig)) from None
    except ValueError as e:
        raise ConfigError(str(e)) from None
    s.overrides = [*s.overrides, *(a for a in argv if a not in own)]
    return SuiteSpec(**vars(s))


@dataclass
class Plan:
    """A suite's runs before any is touched: its exercises (those asked for, after the ones whose models they read)
    and a job per run, each run's config composed and checked."""
    spec: SuiteSpec
    exercises: list[Exercise]
    jobs: list[Job]
    seconds: float              # what planning took: the launcher's check and every run's config

    @property
    def prefix(self) -> str:
        """Before each exercise's name, its experiment's: quick/ for the quick suite."""
        return "quick/" if self.spec.quick else ""

    @property
    def runs(self) -> list[str]:
        """Each run as experiment/variant/seed (quick/nopos/pos/seed1), in the plan's order."""
        return [f"{j.experiment}/{j.spec.name}" for j in self.jobs]


def plan(s: SuiteSpec) -> Plan:
    """Every run the suite asks for, composed and checked, after its launcher: a mistake is a ConfigError of one line
    before any run is touched. An exercise that reads another's models brings it in."""
    started = time.time()
    launchers.find(s.launcher.name).check(s.launcher)
    chosen = list(s.exercises) if s.exercises else exercises.select(s.ablations)
    known = exercises.load_all()
    for ex in list(chosen):
        if ex.init_from and known[ex.init_from] not in chosen:
            chosen.insert(0, known[ex.init_from])
    prefix = "quick/" if s.quick else ""
    # An override of the seed for every run (seed=3 on the command line) wins over each run's own, as it always did.
    seeds_given = any(o.lstrip("+~").split("=")[0] == "seed" for o in s.overrides)
    jobs = []
    for ex in chosen:
        for spec in ex.runs(s.per_variant):
            extra = [*(QUICK_OVERRIDES if s.quick else []), *s.overrides,
                     f"tracking.experiment={config.quoted(prefix + ex.name)}"]
            if s.tracking_uri:
                extra.append(f"tracking.uri={s.tracking_uri}")
            if ex.init_from:  # the same training as the source, so the same checkpoint fits
                extra.append(f"init_from={ex.init_from}")
            try:  # composed once per variant: its seeds are copies (config.load_run)
                cfg = config.load_run([*spec.shared, *extra], None if seeds_given else spec.seed, spec.name)
            except (ConfigError, DataError) as e:  # DataError: a file of your own that cannot be a corpus
                raise ConfigError(f"{ex.name}/{spec.name}: {e}") from None
            jobs.append(Job(spec, cfg, f"{prefix}{ex.name}", cfg.config_hash))
    jobs = only(jobs, s.variants) if s.variants else jobs
    # What each run measures: what any exercise reads of it, another's claims on its variants included.
    measuring.choose(jobs, list({**known, **{ex.name: ex for ex in chosen}}.values()), s.overrides)
    return Plan(s, chosen, jobs, time.time() - started)


def only(jobs: list[Job], variants: list[str]) -> list[Job]:
    """The jobs of the named exercise/variant pairs, and the runs of an exercise they read (init_from) at their
    seeds; a name that is not among the jobs is a ConfigError."""
    named = {f"{j.spec.exercise}/{j.spec.variant}" for j in jobs}
    unknown = sorted(set(variants) - named)
    if unknown:
        raise ConfigError(f"variants={unknown}: no such exercise/variant among the exercises chosen "
                          f"(for example {min(named)})")
    keep = [j for j in jobs if f"{j.spec.exercise}/{j.spec.variant}" in variants]
    sources = {(j.spec.init_from, j.spec.seed) for j in keep if j.spec.init_from}
    return [j for j in jobs if j in keep or (j.spec.exercise, j.spec.seed) in sources]


@contextmanager
def exclusive(store, echo: bool = True) -> None:
    """One suite per store at a time: a second one waits (and says so, with echo), then finds the first one's runs
    finished."""
    folder = store.local_dir or Path.home() / ".cache/tinygpt/locks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"suite-{hashlib.sha256(store.uri.encode()).hexdigest()[:8]}.lock"
    with open(path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if echo:
                print("another suite is using this store; waiting for it to finish…", file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        workers_lock = f"{path}.workers"
        with open(workers_lock, "a+") as w:  # workers of a killed suite: wait until they are gone
            fcntl.flock(w, fcntl.LOCK_EX)
            fcntl.flock(w, fcntl.LOCK_UN)
        yield workers_lock


@dataclass
class Parent:
    """An exercise's parent run: found, or created as the exercise's first run starts, so that its Duration is the
    exercise's, not the queue's before it (created with the suite, a parent showed 1.6 h of a 3-seed suite of every
    exercise while its own runs took minutes: issue 34). Created with the exercise as params (its variants, seeds,
    steps, overrides: the parent's Parameters panel) and the suite's files."""
    experiment: str
    exercise: Exercise
    files: dict[str, str] = field(default_factory=dict)
    run_id: str | None = None

    def open(self, store) -> str:
        """Its run id, the run created now if it has none."""
        if self.run_id is None:
            ex = self.exercise
            self.run_id = store.create_run(self.experiment, ex.name, {"role": "exercise", "ablation": ex.name,
                                                                      "mlflow.note.content": views.description(ex)})
            store.log_params(self.run_id, parent_params(ex))
            self.log_files(store)
        return self.run_id

    def log_files(self, store) -> None:
        for name, text in self.files.items():
            store.client.log_text(self.run_id, text, name)


def parent_params(ex: Exercise) -> dict[str, str]:
    """The exercise's definition, as its parent run's params: each variant's overrides, and what every run shares."""
    shared = {"lesson": ex.lesson, "steps": str(ex.steps or "the recipe's"),
              "overrides": " ".join(ex.overrides) or "none", **({"init_from": ex.init_from} if ex.init_from else {})}
    return {**shared, **{f"variant.{param_name(v)}": " ".join(o) or "the base" for v, o in ex.variants.items()}}


def param_name(variant: str) -> str:
    """A variant's name as MLflow takes a param's key (alphanumerics, _ - . space : /): a sweep's variant,
    'n_head=1,n_layer=2', becomes 'n_head:1_n_layer:2'."""
    return re.sub(r"[^\w\-. :/]", "_", variant.replace("=", ":"))


def attach(store, chosen: list[Exercise], jobs: list[Job], prefix: str, listed: dict | None = None,
           files: dict[str, str] | None = None) -> dict[str, Parent]:
    """Finds each exercise's parent run (a new exercise gets it when its first run starts: Parent.open), finds each
    job's child run if it has one (a job without one gets it when it starts: open_run); marks finished jobs. Reads
    each experiment's runs once, every page of them, and indexes them by config hash: the time grows with the runs.
    listed: filled with each experiment's runs as read, for the suite's end (finished_children). files: text files
    logged on each parent run."""
    from lm.tracking.store import every_run

    parents = {}
    by_hash: dict[str, dict[str, list]] = {}
    for ex in chosen:
        name = prefix + ex.name
        exp_id = store.experiment_id(name)
        store.client.set_experiment_tag(exp_id, "mlflow.note.content", views.description(ex))
        runs = every_run(store.client, [exp_id])  # the newest first
        if listed is not None:
            listed[name] = runs
        if not any(r.data.tags.get("role") == "exercise" for r in runs):
            views.refresh(store.client, exp_id, ex, [])  # a new exercise's views; the suite's end draws them again
        index = by_hash[name] = {}
        for r in runs:
            index.setdefault(r.data.tags.get("config_hash"), []).append(r)
            if r.info.status == "RUNNING" and r.data.tags.get("role") != "exercise":
                # the suite holds the lock, so a RUNNING run is one whose process died
                store.end_run(r.info.run_id, "KILLED", "found RUNNING by the next suite: its process had died")
        found = next((r for r in runs if r.data.tags.get("role") == "exercise"), None)
        parents[name] = Parent(name, ex, dict(files or {}), found and found.info.run_id)
        if found:
            store.mark_running(found.info.run_id)
            parents[name].log_files(store)
    for job in jobs:
        job.parent = parents[job.experiment]
        found = by_hash[job.experiment].get(job.config_hash, [])
        finished = next((r for r in found if r.info.status == "FINISHED"), None)
        diverged = next((r for r in found if r.data.tags.get("diverged") == "true"), None)
        if finished or diverged:
            job.found = finished or diverged
            job.run_id, job.state = job.found.info.run_id, State.FINISHED if finished else State.FAILED
            continue
        if found:  # interrupted or crashed: train it again, in place, from its checkpoint if it has one
            job.run_id = found[0].info.run_id
            measuring.resume(job, found[0])
    return parents


def open_run(store, job: Job) -> str:
    """The job's child run, created now if it has none: as it starts, not when the suite does, because MLflow's
    Duration is a run's end time less its creation time (created with the suite, quick runs that trained 1-10 s
    showed a median of 122 s: docs/ui.md). Created in the suite's process, under its lock, so a kill leaves it
    RUNNING for the next suite to find by its config hash, mark KILLED and train again in place."""
    if job.run_id is None:
        job.run_id = store.create_run(job.experiment, job.spec.name, child_tags(job), parent=job.parent.open(store))
    return job.run_id


def finished_children(store, parent_id: str, listed: list, jobs: list[Job]) -> list:
    """The parent's finished child runs at the suite's end: those attach() read, but the runs this suite started
    (jobs), read again. One get_run per run trained rather than a second reading of every run: at 10,000 runs
    a reading took as long as the rest of a suite that trains nothing."""
    ran = {j.run_id for j in jobs}
    runs = [r for r in listed if r.info.run_id not in ran and r.info.status == "FINISHED"
            and r.data.tags.get("mlflow.parentRunId") == parent_id]
    runs += [store.client.get_run(run_id) for run_id in ran]
    return [r for r in runs if r.info.status == "FINISHED"]


def child_tags(job: Job) -> dict[str, object]:
    """The tags a job's run is created with (beside the store's own: lm.tracking.store.Store.create_run)."""
    return {"ablation": job.spec.exercise, "variant": job.spec.variant, "seed": job.spec.seed,
            "config_hash": job.config_hash, **job.tags}


def pair_twins(jobs: list[Job]) -> None:
    """Exercises share variants (context's ctx64 is heads' h4 and nopos' pos): of the runs with one config hash,
    one trains (or has finished already) and each other pending one copies its results."""
    leaders: dict[str, Job] = {}
    for job in sorted(jobs, key=lambda j: j.state == State.PENDING):  # a finished run leads
        leader = leaders.setdefault(job.config_hash, job)
        if leader is not job and job.state == State.PENDING:
            job.twin = leader


# A worker's own, kept from one run to the next: it trains many runs, one after another, and reads each corpus and
# opens each store once. (A store opened again in the same process costs milliseconds: MLflow keeps its database
# engine per URI. The first opening, a new database's, took 3 s on an idle machine: make bench's process rows.)
_corpora: dict = {}
_stores: dict = {}


def run_job(cfg: RunConfig, run_id: str, init_run: str | None) -> dict:
    """In a worker: one run, start to finish."""
    from lm.model.data import prepare
    from lm.run import train
    from lm.tracking.store import Store

    devices.pin_gpu(worker_slot())  # with several GPUs, this worker's own; before anything starts CUDA
    key = cfg.data.sha256  # the corpus itself: two texts of your own are two corpora
    if key not in _corpora:
        _corpora[key] = prepare(cfg)
    where = (cfg.tracking.uri, cfg.tracking.checkpoint_dir)
    if where not in _stores:
        _stores[where] = Store(*where)
    cfg.runtime.progress_position = worker_slot()
    cfg.runtime.progress = cfg.runtime.progress and sys.stdout.isatty()
    t = time.time()
    result = train.execute(cfg, _corpora[key], _stores[where], run_id, init_run)
    keep = ("status", "reason", "signal", "val_loss", "ms_per_step")
    return {**{k: result[k] for k in keep if k in result}, "seconds": time.time() - t}


def copy_job(job: Job, store) -> dict:
    """In the suite's own process: a twin's results copied from its leader's run, in a second or so."""
    from lm.run import train

    t = time.time()
    try:
        result = train.copy(job.cfg, store, job.twin.run_id, open_run(store, job))
    except Exception as e:  # as a crash in a worker: this run is FAILED, the suite goes on
        result = {"status": "FAILED", "reason": f"{type(e).__name__}: {e}"}
        store.end_run(job.run_id, "FAILED", result["reason"])
    return {**result, "seconds": time.time() - t}


class CtrlC:
    """The suite's Ctrl-C, while it holds the store: the first is counted, and the suite acts on it at its next
    step; a second raises KeyboardInterrupt, to quit at once. Python's own handler raises KeyboardInterrupt wherever
    the main thread is, and one raised inside a finalizer or a weakref callback (the database's connections have
    them) is printed and dropped: the suite would go on as if nothing had happened."""

    def __init__(self):
        self.count = 0

    def __enter__(self) -> "CtrlC":
        self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        signal.signal(signal.SIGINT, self._old)

    def _handle(self, signum, frame) -> None:
        self.count += 1
        if self.count > 1:
            raise KeyboardInterrupt


STOPPING = "stopping: the runs in progress finish their step and are marked KILLED (Ctrl-C again to quit now)"


def dispatch(jobs: list[Job], launcher, bar, store, ctrl_c: CtrlC, say: Callable[[str], None] = tqdm.write) -> bool:
    """Runs the pending jobs, longest first, a source before what reads it, a twin after its leader (and copies
    the leader's results). False if interrupted: by a Ctrl-C to the suite, or to one of its runs (a terminal's
    Ctrl-C goes to every process of the suite: a run stopped by it stops the suite, even if the suite's own process
    missed it). say: where the line of each finished run goes (above the bar)."""
    pending = sorted((j for j in jobs if j.state == State.PENDING), key=lambda j: -j.cost)
    sources = {(j.spec.exercise, j.spec.seed): j for j in jobs}
    running: dict = {}
    interrupted = False
    finished, total = 0, len(pending)
    work = {"done": 0.0, "total": sum(j.cost for j in pending), "start": time.time()}

    def advance(job):
        work["done"] += job.cost
        bar.update(job.cost)

    def ready(job):
        if job.twin is not None and job.twin.state.gave_up:
            job.twin = None  # then it trains, and shows for itself what became of that config
        if job.twin is not None:
            return job.twin.state.succeeded
        if not job.spec.init_from:
            return True
        src = sources.get((job.spec.init_from, job.spec.seed))
        if src.state.gave_up:
            job.state = State.SKIPPED
            job.result = {"reason": f"{job.spec.init_from} seed {job.spec.seed} did not finish"}
            open_run(store, job)  # FAILED with that reason when the suite ends
            advance(job)
            return False
        return src.state.succeeded

    def report(job):
        nonlocal finished
        finished += 1
        r = job.result
        what = f"val_loss {r['val_loss']:.3f}" if "val_loss" in r else r.get("reason", "")
        how = f"copied from {job.twin.experiment}/{job.twin.spec.name} (the same config)" \
            if job.twin and r["status"] == "FINISHED" else ""
        left = (time.time() - work["start"]) * (work["total"] / work["done"] - 1) if work["done"] else None
        eta = f" (suite: about {left / 60:.1f} min left)" if left is not None else ""
        say(f"[{finished}/{total}] {job.experiment}/{job.spec.name}: {how or r['status'].lower()} in "
            f"{r.get('seconds', 0):.0f}s, {what}{eta}")

    while pending or running:
        if not interrupted and (ctrl_c.count or any(j.result.get("signal") == "SIGINT" for j in jobs)):
            interrupted = True
            pending = []
            launcher.interrupt()
            say(STOPPING)
        if not interrupted:
            for job in [j for j in pending if ready(j) and j.twin is not None]:  # copies: here, at once
                pending.remove(job)
                job.result = copy_job(job, store)
                job.state = State.DONE if job.result["status"] == "FINISHED" else State.FAILED
                report(job)
            for job in [j for j in pending if len(running) < launcher.capacity and ready(j) and j.twin is None]:
                if len(running) >= launcher.capacity:
                    break
                pending.remove(job)
                src = sources.get((job.spec.init_from, job.spec.seed))
                running[launcher.submit(run_job, job.cfg, open_run(store, job), src and src.run_id)] = job
            pending = [j for j in pending if j.state == State.PENDING]
        for fut in [f for f in running if f.done()]:
            job = running.pop(fut)
            try:
                job.result = fut.result()
            except Exception as e:  # a crash in the worker, or its death: the run is FAILED, the suite goes on
                reason = str(e) if isinstance(e, WorkerDied) else f"{type(e).__name__}: {e}"
                job.result = {"status": "FAILED", "reason": reason}
                if store.client.get_run(job.run_id).info.status == "RUNNING":  # a job that never reached it
                    store.end_run(job.run_id, "FAILED", job.result["reason"])
            job.state = {"FINISHED": State.DONE, "KILLED": State.KILLED}.get(job.result["status"], State.FAILED)
            advance(job)
            report(job)
        bar.set_description(f"{finished} of {total} runs done, {len(running)} running", refresh=False)
        if interrupted and not running:
            break
        time.sleep(0.1)
    return not interrupted


def ended(store, jobs: list[Job]) -> list:
    """Each job's MLflow run as the suite ends (None for a job that never got one): a run finished before the suite
    began as attach() read it, the others read again."""
    return [job.found or (store.client.get_run(job.run_id) if job.run_id else None) for job in jobs]


def summarise(jobs: list[Job], runs: list, means: dict[str, dict[str, aggregates.Mean]]) -> str:
    """The closing table: per exercise and variant, its seeds, how many finished, and the validation loss as mean ±
    std over the finished seeds, read from `means` (each exercise's parent-run summaries, from aggregates.refresh:
    one computation for the table, the parent run and the UI). runs: each job's, from ended()."""
    import pandas as pd

    rows = []
    for job, run in zip(jobs, runs):
        rows.append({"exercise": job.experiment, "variant": job.spec.variant,
                     "status": run.info.status if run else job.state.name})
    table = pd.DataFrame(rows).groupby(["exercise", "variant"], sort=False).agg(
        seeds=("status", "size"), finished=("status", lambda s: int((s == "FINISHED").sum())))
    table["val_loss"] = [_mean_std(means.get(exercise, {}), variant) for exercise, variant in table.index]
    return table.to_string()


def _mean_std(parent: dict[str, aggregates.Mean], variant: str) -> str:
    """'1.234 ± 0.01 (3 seeds)': the parent run's summary of the variant's validation loss; '-' for none."""
    found = parent.get(f"{aggregates.prefix(variant)}/val_loss")
    return str(found) if found else "-"
