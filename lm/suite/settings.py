"""A suite's settings: `make ablations`'s words, as conf/suite.yaml declares them and the command line overrides them
(SuiteConfig), and a suite as a caller asks for it (SuiteSpec).

    python -m lm.commands.suite [ablations=[nomask,heads]] [seeds=1] [quick=true] [workers=2] [train.lr=0.01 ...]

Each exercise is an MLflow experiment holding one parent run with a child run per (variant, seed). A child
whose config hash already FINISHED is skipped; one left RUNNING, KILLED or FAILED by a crash is trained again
in place, from its last checkpoint. A run that diverged stays FAILED, with its reason.
"""
from dataclasses import dataclass, field, fields
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from lm.settings import config
from lm.settings.config import ConfigError
from lm.settings.exercises import Exercise
from lm.suite.launchers import LauncherConfig

DEFAULT_SEEDS = 3  # per variant: the fewest a firm verdict needs (analysis/verdicts/decision.py's MIN_SEEDS)
QUICK_OVERRIDES = [  # toy size: every code path, in seconds
    "train.steps=20", "eval.every=10", "eval.val_batches=2", "eval.val_batch_size=16", "eval.honest_windows=8",
    "eval.head_windows=8", "eval.final_windows=64", "sample.length=100", "sample.count=2",
]


@dataclass
class SuiteConfig:
    """The suite's settings as conf/suite.yaml declares them and the command line overrides them."""
    ablations: Any = "all"      # all, or a list of exercise names
    seeds: int | None = None    # per variant; null: 3, quick runs 1
    finding_seeds: int | None = 2   # per variant that no claim with a verdict reads; null: as many as `seeds`
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
        if self.finding_seeds is not None and self.finding_seeds <= 0:
            raise ValueError(f"finding_seeds={self.finding_seeds} must be positive, or null for as many as seeds")
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
