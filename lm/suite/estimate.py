"""A suite's plan before the hour (`make ablations ARGS="plan=true"`): each run, whether the store has it done, whether
it is a copy of a twin, and the time the rest will take, estimated from the store's own finished runs; nothing is
trained and nothing in the store is written.

A run's time is that of the store's finished run of the same config (its MLflow start to end: training, validation
and its measurements), else its own cost (Job.cost) at the seconds per unit of cost the store's runs took, else its
steps at the store's median ms_per_step plus its median time besides training (train_time_s), else DEFAULT_MS_PER_STEP
and DEFAULT_BESIDES_S, said to be defaults. The runs are laid out longest first on the suite's workers, as the suite
dispatches them, and the suite's own time beside its runs (its imports, its workers' start, its end in the store) is
what the store's suites took (the `suite.overhead_s` tag of a parent run), else DEFAULT_OVERHEAD_S.
"""
import heapq
import statistics
from dataclasses import dataclass, field

from lm.settings import options
from lm.suite.launchers.local import plan_workers
from lm.suite.runner import OVERHEAD_TAG
from lm.suite.jobs import Job, State, pair_twins
from lm.suite.planning import Plan
from lm.tracking import store_check

# With no finished run to go by: the base model's step on one core of the 2-core machine the README names, loaded,
# and what a run does besides its steps (validation, samples, head statistics, knock-out where it is read).
DEFAULT_MS_PER_STEP = 120.0
DEFAULT_BESIDES_S = 30.0
DEFAULT_OVERHEAD_S = 30.0
COPY_S = 2.0                 # a twin's results copied in the suite's own process


@dataclass
class Timings:
    """What a store's finished runs took: by config hash, and the medians an unmatched run is estimated with."""
    by_hash: dict[str, float] = field(default_factory=dict)      # seconds, start to end
    done: set[tuple[str, str]] = field(default_factory=set)     # (experiment, config hash) finished or diverged
    ms_per_step: float | None = None
    besides_s: float | None = None
    overhead_s: float | None = None
    runs: int = 0


def read(uri: str) -> Timings:
    """The store's finished runs' times, read without writing: a store that is not there yet has none."""
    out = Timings()
    if store_check.is_new(uri):
        return out
    from mlflow.tracking import MlflowClient

    from lm.tracking.store import every_run

    client = MlflowClient(tracking_uri=uri)
    experiments = {e.experiment_id: e.name for e in client.search_experiments()}
    if not experiments:
        return out
    steps, besides, overheads = [], [], []
    for run in every_run(client, list(experiments)):
        tags, info = run.data.tags, run.info
        if tags.get("role") == "exercise":
            if OVERHEAD_TAG in tags:
                overheads.append(float(tags[OVERHEAD_TAG]))
            continue
        finished = info.status == "FINISHED"
        if (finished or tags.get("diverged") == "true") and tags.get("config_hash"):
            out.done.add((experiments[info.experiment_id], tags["config_hash"]))
        if not finished or not info.end_time or "config_hash" not in tags or "init_from_run" in tags:
            continue
        seconds = (info.end_time - info.start_time) / 1000
        out.by_hash.setdefault(tags["config_hash"], seconds)
        out.runs += 1
        metrics = run.data.metrics
        if "ms_per_step" in metrics and "train_time_s" in metrics:
            steps.append(metrics["ms_per_step"])
            besides.append(max(0.0, seconds - metrics["train_time_s"]))
    out.ms_per_step = statistics.median(steps) if steps else None
    out.besides_s = statistics.median(besides) if besides else None
    out.overhead_s = statistics.median(overheads) if overheads else None
    return out


@dataclass
class Row:
    """One run of the plan."""
    experiment: str
    variant: str
    seed: int
    state: str           # done, copy (of a twin's results) or to train
    seconds: float       # estimated; 0 for a run done
    twin: str = ""


@dataclass
class Estimate:
    rows: list[Row]
    workers: int
    seconds: float       # the suite's, start to end
    basis: str           # what the figures come from, in words


def estimate(p: Plan, timings: Timings, done: Timings | None = None) -> Estimate:
    """The plan's runs against `done`'s store (which are finished), timed from `timings`' runs: the same store for
    `make ablations ARGS="plan=true"`."""
    done = timings if done is None else done
    jobs = [Job(j.spec, j.cfg, j.experiment, j.config_hash) for j in p.jobs]   # its own: the suite's stay untouched
    for job in jobs:
        if (job.experiment, job.config_hash) in done.done:
            job.state = State.FINISHED
    pair_twins(jobs)
    rate = _rate(jobs, timings)
    rows, basis = [], set()
    for job in jobs:
        name = dict(experiment=job.experiment, variant=job.spec.variant, seed=job.spec.seed)
        if job.state == State.FINISHED:
            rows.append(Row(**name, state="done", seconds=0.0))
        elif job.twin is not None:
            rows.append(Row(**name, state="copy", seconds=COPY_S,
                            twin=f"{job.twin.experiment}/{job.twin.spec.name}"))
        else:
            seconds, how = _seconds(job, timings, rate)
            basis.add(how)
            rows.append(Row(**name, state="train", seconds=seconds))
    trained = [r.seconds for r in rows if r.state == "train"]
    workers, _ = plan_workers(max(1, len(trained)), p.spec.workers, p.spec.threads)
    lanes = [0.0] * workers
    for s in sorted(trained, reverse=True):   # longest first, each on the lane free first
        heapq.heapreplace(lanes, lanes[0] + s)
    copies = sum(r.seconds for r in rows if r.state == "copy")
    overhead = timings.overhead_s if timings.overhead_s is not None else DEFAULT_OVERHEAD_S
    todo = trained or copies
    seconds = (max(lanes) + copies + overhead) if todo else 0.0
    if timings.overhead_s is None and todo:
        basis.add(f"the suite's own time beside its runs a default {DEFAULT_OVERHEAD_S:.0f} s (no suite in the "
                  f"store recorded its own)")
    return Estimate(rows, workers, seconds, "; ".join(sorted(basis)) or "every run is done")


def _rate(jobs: list[Job], timings: Timings) -> float | None:
    """Seconds per unit of Job.cost, from the jobs whose config the store has run."""
    ratios = [timings.by_hash[j.config_hash] / j.cost for j in jobs if j.config_hash in timings.by_hash and j.cost]
    return statistics.median(ratios) if ratios else None


def _seconds(job: Job, timings: Timings, rate: float | None) -> tuple[float, str]:
    if job.config_hash in timings.by_hash:
        return timings.by_hash[job.config_hash], "a run the store has of the same config: its time"
    if rate is not None:
        return job.cost * rate, "another run: its cost at the seconds per unit the store's runs of these configs took"
    steps = job.cfg.train.steps
    if timings.ms_per_step is not None:
        return (steps * timings.ms_per_step / 1000 + (timings.besides_s or 0.0),
                f"steps at the store's median {timings.ms_per_step:.0f} ms a step and "
                f"{timings.besides_s or 0:.0f} s besides")
    return (steps * DEFAULT_MS_PER_STEP / 1000 + DEFAULT_BESIDES_S,
            f"no finished run in the store: a default of {DEFAULT_MS_PER_STEP:.0f} ms a step and "
            f"{DEFAULT_BESIDES_S:.0f} s besides")


def text(e: Estimate, shown: str) -> str:
    """The plan as `make ablations ARGS="plan=true"` prints it."""
    rows = [(f"{r.experiment}/{r.variant}/seed{r.seed}",
             {"done": "done", "copy": f"copy of {r.twin}", "train": f"to train, about {r.seconds:.0f} s"}[r.state])
            for r in e.rows]
    counts = {s: sum(r.state == s for r in e.rows) for s in ("done", "copy", "train")}
    head = (f"{len(e.rows)} runs ({shown}): {counts['done']} already done, {counts['copy']} copies of a twin, "
            f"{counts['train']} to train")
    tail = (f"estimated {e.seconds / 60:.1f} min on {e.workers} worker{'s' * (e.workers != 1)} ({e.basis}); "
            f"nothing was trained: run it without plan=true" if counts["copy"] + counts["train"]
            else "nothing to run: every run is already finished")
    return f"{head}\n{options.table(rows)}\n{tail}"
