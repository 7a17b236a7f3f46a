"""Stores of many finished runs, laid out exactly as the suite lays them out, built in seconds rather than hours:
for `make bench only=scale` and the tests that hold the suite to a store of more than 10,000 runs.

One exercise, `scale`, of two variants and n/2 seeds each. The suite's own plan composes its runs, the suite's own
find_runs() and open_run() create the parent run and the first child with the suite's tags, and that child is
finished as a run finishes (its params, its headline metrics, FINISHED). Every other child is that first one's rows
in MLflow's own tables (mlflow.store.tracking.dbmodels), copied in one transaction with its own run id, name, seed, config hash,
params and metrics: MLflow's client creates a run in 37 to 98 ms here (one transaction for the run, one for its
tags and values, one to end it), six to sixteen minutes for 10,000.
"""
import fcntl
import hashlib
import shutil
import uuid
from pathlib import Path

import mlflow
import sqlalchemy
from mlflow.entities import Param
from mlflow.store.tracking.dbmodels.models import (
    SqlLatestMetric,
    SqlMetric,
    SqlParam,
    SqlRun,
    SqlTag,
)

from lm.run import train
from lm.settings import exercises
from lm.suite import SuiteSpec
from lm.suite.bookkeeping import find_runs, open_run
from lm.suite.jobs import Job, child_tags
from lm.suite.planning import plan as plan_suite
from lm.tracking.store import Store

NAME = "scale"
LAYOUT = 1  # a new value when the layout below changes: cached stores of the old one are built again
CACHE = Path.home() / ".cache" / "tinygpt" / "scale"


def exercise_yaml(seeds: int) -> str:
    """The exercise, as experiments/*.yaml would declare it; logged on its parent run, so `make report` finds it."""
    return (f"# {NAME}: lm/tools/scale_store.py's exercise, {2 * seeds} runs\n"
            f"title: Many finished runs\nlesson: 'none: a store for measuring the bookkeeping'\n"
            f"measures: how the bookkeeping grows with the runs\nsteps: 20\nseeds: {seeds}\n"
            f"variants:\n  h4: []\n  h2: [model.n_head=2]\n")


def exercise(runs: int) -> exercises.Exercise:
    """The scale exercise of `runs` runs (rounded down to even)."""
    return exercises.parse(NAME, exercise_yaml(runs // 2), "lm/tools/scale_store.py")


def plan(uri: str, runs: int) -> tuple[list[exercises.Exercise], list[Job]]:
    """The suite's plan of the scale exercise into the store at uri."""
    p = plan_suite(SuiteSpec(seeds=runs // 2, tracking_uri=uri, exercises=[exercise(runs)]))
    return p.exercises, p.jobs


def metrics(job: Job) -> dict[str, float]:
    """A finished run's headline numbers, different for each seed, the same on every build."""
    loss = 1.75 + 0.01 * ((job.spec.seed * 7919) % 101) / 100 + (0.03 if job.spec.variant == "h2" else 0.0)
    return {"val_loss": loss, "val_perplexity": 2.718281828 ** loss, "ms_per_step": 20.0}


def build(folder: Path, runs: int, params: bool = True) -> list[Job]:
    """A new store in folder holding one parent run and `runs` finished child runs; returns the jobs. Without
    params, the runs have none of their 72 params, which the suite's bookkeeping never reads and which take most of
    the time of reading runs back (search_runs: 4.4 s for 1,000 runs with them, on a loaded machine)."""
    uri = f"sqlite:///{folder}/mlflow.db"
    chosen, jobs = plan(uri, runs)
    store = Store(uri)
    first, rest = jobs[0], jobs[1:]
    parents = find_runs(store, chosen, [first], quick=False)
    open_run(store, first)  # a job gets its run as it starts, and the exercise its parent: they start now
    parent = parents[NAME].run_id
    store.client.log_text(parent, exercise_yaml(runs // 2), "exercise.yaml")
    if params:
        store.client.log_batch(first.run_id, params=[Param(k, str(v)) for k, v in train.params(first.cfg).items()])
    store.log_metrics(first.run_id, metrics(first), first.cfg.train.steps)
    store.end_run(first.run_id, "FINISHED")
    store.end_run(parent, "FINISHED")
    engine = sqlalchemy.create_engine(uri)
    try:
        with engine.begin() as db:
            _copy(db, first, rest, params)
    finally:
        engine.dispose()
    return jobs


def _copy(db, first: Job, jobs: list[Job], params: bool) -> None:
    """Each job's run: the first job's rows, with the job's own values where they differ."""
    def rows(model):
        table = model.__table__
        return [dict(r._mapping) for r in db.execute(sqlalchemy.select(table).where(table.c.run_uuid == first.run_id))]

    (run,), tags, latest, points = rows(SqlRun), rows(SqlTag), rows(SqlLatestMetric), rows(SqlMetric)
    out = {SqlRun: [], SqlTag: [], SqlParam: [], SqlLatestMetric: [], SqlMetric: []}
    for i, job in enumerate(jobs, 1):
        run_id = uuid.uuid4().hex
        job.run_id = run_id
        out[SqlRun].append({**run, "run_uuid": run_id, "name": job.spec.name, "start_time": run["start_time"] + i,
                            "end_time": run["end_time"] + i,
                            "artifact_uri": run["artifact_uri"].replace(first.run_id, run_id)})
        own = {**{k: str(v) for k, v in child_tags(job).items()}, "mlflow.runName": job.spec.name}
        out[SqlTag] += [{**t, "run_uuid": run_id, "value": own.get(t["key"], t["value"])} for t in tags]
        if params:
            out[SqlParam] += [{"key": k, "value": str(v), "run_uuid": run_id} for k, v in train.params(job.cfg).items()]
        values = metrics(job)
        for model, found in ((SqlLatestMetric, latest), (SqlMetric, points)):
            out[model] += [{**m, "run_uuid": run_id, "value": values[m["key"]]} for m in found]
    for model, new in out.items():
        for i in range(0, len(new), 50_000):
            db.execute(model.__table__.insert(), new[i:i + 50_000])


def cached(runs: int) -> Path:
    """The folder of a built store of `runs` runs, built once per layout, MLflow version and config: a copy of it
    is what a bench reads (the suite writes to the parent run)."""
    _, jobs = plan("sqlite:///unused", runs)
    key = hashlib.sha256(f"{LAYOUT} {mlflow.__version__} {jobs[0].config_hash} {jobs[-1].config_hash}".encode())
    folder = CACHE / f"{runs}-{key.hexdigest()[:10]}"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "a+") as lock:  # built in place (the runs' artifact URIs name the folder), once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "built").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that was killed half way
            build(folder, runs)
            (folder / "built").write_text(f"{runs} runs\n")
    return folder


def copy(runs: int, into: Path) -> str:
    """A private copy of the cached store of `runs` runs in `into`; returns its URI."""
    shutil.copytree(cached(runs), into, ignore=shutil.ignore_patterns("built"))
    return f"sqlite:///{into}/mlflow.db"
