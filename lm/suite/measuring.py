"""Which end-of-run measurements each of a suite's runs makes (lm/settings/measures.py's `when`): what its exercise and
any other reads of its variant (lm/settings/needs.py); for a run two exercises share (twins: one trains, the others
copy it), what any of them reads; the MLflow model on each variant's first seed. A switch that the user's command
line or the exercise's own file sets (`measure.knockout=true`, `measure=all`) stays as set. What a run does not make
is in its `not_measured` tag, and the report says "not measured" for it; its `mlflow_model` tag says where the
variant's model is.

Measured (base model, one thread, a warm worker): the knock-out alone cost a run as much as 100 of its steps, the
MLflow model 25 to 40, the training text's loss 15 to 25 (lm/settings/measures.py).
"""
from collections import defaultdict

from lm.settings import needs
from lm.settings.exercises import Exercise
from lm.settings.measures import MODEL_TAG, TABLE


def explicit(overrides: list[str]) -> set[str]:
    """The measurements whose switches these overrides set: all of them for a preset (measure=none)."""
    names = set()
    for o in overrides:
        key = o.lstrip("+~").split("=")[0]
        if key == "measure":
            names |= {m.name for m in TABLE}
        elif key.startswith("measure."):
            names.add(key.removeprefix("measure."))
    return names


def first_seeds(exercises: list[Exercise]) -> dict[tuple[str, str], int]:
    """Each variant's first seed, whatever the number of seeds: the one whose run logs the variant's MLflow model."""
    firsts: dict[tuple[str, str], int] = {}
    for ex in exercises:
        for spec in ex.runs(1):
            key = (ex.name, spec.variant)
            firsts[key] = min(firsts.get(key, spec.seed), spec.seed)
    return firsts


def model_tag(logged: bool, asked: bool, seed: int, first_seed: int) -> str:
    """Where the variant's MLflow model is, as the run's `mlflow_model` tag says it. asked: the switch was set by
    the user or the exercise's file."""
    if asked:
        return "logged: measure.mlflow_model=true" if logged else "not logged: measure.mlflow_model=false"
    if logged:
        return "logged: the variant's first seed" if seed == first_seed else "logged: its exercise reads it"
    return f"not logged: on the variant's first seed (seed {first_seed}); measure.mlflow_model=true logs it on every run"


def choose(jobs: list, exercises: list[Exercise], overrides: list[str]) -> None:
    """Sets each job's `cfg.measure` and its MLflow-model tag (`job.tags`). jobs: the suite's (lm.suite.jobs.Job);
    exercises: every exercise whose claims may name theirs (the chosen ones and experiments/'s); overrides: the
    suite's own, applied to every run."""
    read = needs.reads(exercises)
    firsts = first_seeds(exercises)
    shared = defaultdict(set)   # a twin's runs are one: each reads what any of them is read for
    for job in jobs:
        shared[job.config_hash] |= read.get((job.spec.exercise, job.spec.variant), set())
    for job in jobs:
        first = firsts.get((job.spec.exercise, job.spec.variant), job.spec.seed)
        made = needs.needed(shared[job.config_hash], job.spec.seed == first)
        asked = explicit([*job.spec.shared, *overrides])
        for m in TABLE:
            if m.name not in asked:
                setattr(job.cfg.measure, m.name, m.name in made)
        job.tags[MODEL_TAG] = model_tag(job.cfg.measure.mlflow_model, "mlflow_model" in asked, job.spec.seed, first)


def resume(job, run) -> None:
    """A run trained again in place (after a kill) makes the measurements it was started with, which its params say
    (MLflow keeps a run's first value of a param): runs from before a change of plan finish as they began."""
    for m in TABLE:
        logged = run.data.params.get(f"measure.{m.name}")
        if logged is not None:
            setattr(job.cfg.measure, m.name, logged == "True")
