"""What a suite gives back (lm.suite.run): each run as it ended, the per-variant means, the closing table, the time,
whether it was interrupted, and the exit status `make ablations` returns for it."""
from dataclasses import dataclass, field
from enum import IntEnum

from lm.suite.jobs import State
from lm.tracking.aggregates import Mean


class ExitStatus(IntEnum):
    """How a suite ended, as its command's exit status."""
    OK = 0               # every run finished
    FAILED = 1           # a run failed, was killed or was skipped; the others finished
    BAD_INPUT = 2        # nothing started: run() raised the error (a ConfigError, ...), the command prints it
    INTERRUPTED = 130    # Ctrl-C: the finished runs are kept, the same suite again resumes the rest


@dataclass(frozen=True)
class RunOutcome:
    """One run of a suite as the suite ended: which run it is, where it stands and what it measured."""
    experiment: str             # quick/nopos
    exercise: str               # nopos
    variant: str
    seed: int
    state: State
    run_id: str | None          # None: never started (the suite was interrupted first)
    metrics: dict[str, float] = field(default_factory=dict)  # the run's in MLflow, each metric's last value
    reason: str | None = None   # why it did not finish; None for one that did
    copied_from: str | None = None  # the run whose results it copied (a twin: the same config in another exercise)

    @property
    def name(self) -> str:
        """Its run's name in MLflow, variant/seed (pos/seed1)."""
        return f"{self.variant}/seed{self.seed}"


@dataclass(frozen=True)
class SuiteResult:
    """A suite as it ended."""
    runs: list[RunOutcome]      # every run of the plan, in its order (none if interrupted before any run started)
    # Per experiment, its parent run's summaries as numbers: {"h4/val_loss": Mean(mean=2.962, std=None, seeds=1)},
    # each one's str() the parent's tag, '2.962 (1 seed)'.
    means: dict[str, dict[str, Mean]]
    table: str                  # the closing table, as printed
    seconds: float              # wall time, from the call to the end
    status: ExitStatus

    @property
    def interrupted(self) -> bool:
        """Whether a Ctrl-C stopped it (or came as it ended)."""
        return self.status == ExitStatus.INTERRUPTED

    def means_table(self):
        """The means as a pandas table: a row per (experiment, variant, metric), with its mean, std and seeds."""
        import pandas as pd

        rows = [{"experiment": experiment, "variant": key.rpartition("/")[0], "metric": key.rpartition("/")[2],
                 "mean": m.mean, "std": m.std, "seeds": m.seeds}
                for experiment, means in self.means.items() for key, m in means.items()]
        return pd.DataFrame(rows, columns=["experiment", "variant", "metric", "mean", "std", "seeds"])

    @property
    def ran(self) -> list[RunOutcome]:
        """The runs this suite finished: trained, or copied from a twin."""
        return [r for r in self.runs if r.state == State.DONE]
