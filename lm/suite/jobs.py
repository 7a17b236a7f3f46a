"""A suite's jobs: one per run it asks for, where each stands (State), what it costs, and the twins among them."""
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from lm.settings.config import RunConfig
from lm.settings.exercises import RunSpec


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
    parent: Any = None          # the exercise's parent run (lm.suite.bookkeeping.Parent)
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
