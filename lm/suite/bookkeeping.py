"""The suite's bookkeeping in the store: one suite per store at a time, each exercise's parent run and each job's
child run found or created (a run as it starts, so that its MLflow Duration is its own), and the runs read back as
the suite ends."""
import fcntl
import hashlib
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lm.settings.exercises import Exercise
from lm.suite import measuring
from lm.suite.jobs import Job, State, child_tags
from lm.tracking import views
from lm.tracking.naming import experiment_name


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
    exercise's own, not that of the queue before it. Created with the exercise as params (its variants, seeds,
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


def find_runs(store, chosen: list[Exercise], jobs: list[Job], quick: bool, listed: dict | None = None,
              files: dict[str, str] | None = None) -> dict[str, Parent]:
    """Each exercise's parent run (by experiment), and each job's run, found in the store: a finished job is marked
    so, an interrupted one trains again in its run, and a run left RUNNING by a dead process is marked KILLED. A new
    exercise gets its parent run as its first run starts (Parent.open), a job without a run as it starts
    (open_run). Reads each experiment's runs once, every page of them, and indexes them by config hash: the time
    grows with the runs. listed: filled with each experiment's runs as read, for the suite's end
    (finished_children). files: text files logged on each parent run."""
    from lm.tracking.store import every_run

    parents = {}
    by_hash: dict[str, dict[str, list]] = {}
    for ex in chosen:
        name = experiment_name(ex.name, quick)
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
    Duration is a run's end time less its creation time (docs/ui.md). Created in the suite's process, under its
    lock, so a kill leaves it RUNNING for the next suite to find by its config hash, mark KILLED and train again in
    place."""
    if job.run_id is None:
        job.run_id = store.create_run(job.experiment, job.spec.name, child_tags(job), parent=job.parent.open(store))
    return job.run_id


def finished_children(store, parent_id: str, listed: list, jobs: list[Job]) -> list:
    """The parent's finished child runs at the suite's end: those find_runs() read, but the runs this suite started
    (jobs), read again: one get_run per run trained rather than a second reading of every run, whose time grows
    with the store."""
    ran = {j.run_id for j in jobs}
    runs = [r for r in listed if r.info.run_id not in ran and r.info.status == "FINISHED"
            and r.data.tags.get("mlflow.parentRunId") == parent_id]
    runs += [store.client.get_run(run_id) for run_id in ran]
    return [r for r in runs if r.info.status == "FINISHED"]


def final_runs(store, jobs: list[Job]) -> list:
    """Each job's MLflow run as the suite ends (None for a job that never got one): a run finished before the suite
    began as find_runs() read it, the others read again."""
    return [job.found or (store.client.get_run(job.run_id) if job.run_id else None) for job in jobs]
