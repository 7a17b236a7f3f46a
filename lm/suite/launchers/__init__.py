"""Where a suite's runs execute: a launcher, chosen by conf/launcher/<config>.yaml's `name:`. Each module of this
package is a launcher that registers itself under its name: worker processes on this machine (local.py, `local`),
or one job per run through submitit, on SLURM or as local processes (submitit.py, `submitit`).

A launcher of your own is one module here and one config:

    # lm/suite/launchers/mine.py
    from lm.suite.launchers import Launch, LauncherConfig, register

    @register("mine")
    class Mine:
        @classmethod
        def check(cls, cfg: LauncherConfig) -> None: ...   # a ConfigError of one line if it cannot launch
        @classmethod
        def warm(cls) -> None: ...                          # what can start early; nothing, for most
        @classmethod
        def start(cls, launch: Launch) -> "Mine": ...       # capacity, threads, then submit, describe, ...

    # conf/launcher/mine.yaml (LauncherConfig's keys; settings of its own go in `parameters`)
    name: mine
    parameters: {queue: long}

and `make ablations ARGS="launcher=mine"` runs on it. A launcher runs lm.suite.worker.run_job(cfg, run_id, init_run)
somewhere that reaches the store, and returns what it returned.
"""
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from lm.settings.config import ConfigError


@dataclass
class LauncherConfig:
    """A launcher's settings, from conf/launcher/<config>.yaml."""
    name: str = "local"         # the launcher: local (worker processes here), submitit (one job per run: SLURM, local)
    cluster: str | None = None  # submitit's cluster: slurm, local or debug
    folder: str = ".cache/submitit"
    max_jobs: int = 8           # jobs in flight at once
    parameters: dict[str, Any] = field(default_factory=dict)  # the launcher's own: submitit's resources (timeout_min)


@dataclass(frozen=True)
class Launch:
    """What a launcher starts from: its settings, the runs it is to launch, and the suite's settings for them."""
    config: LauncherConfig
    runs: int                   # how many are to run
    workers: int                # the suite's workers=: processes on this machine; 0: chosen for it
    threads: int                # the suite's threads=: torch threads per run; 0: one
    accelerator: str            # the runs' runtime.accelerator
    workers_lock: str           # the file a process that trains on this machine holds shared (lm.suite.bookkeeping.exclusive)


class WorkerDied(RuntimeError):
    """The process that ran a job died under it (the kernel's out-of-memory killer, a kill, a crash in C): the
    job's run failed, and nothing else did."""


class Work(Protocol):
    """A run submitted to a launcher."""

    def done(self) -> bool:
        """Whether it has ended, without waiting."""

    def result(self) -> dict:
        """What run_job returned; else its error (WorkerDied where its process died), in one line."""


class Launcher(Protocol):
    """What the suite asks of a launcher: its size, then runs submitted, polled, interrupted and shut down."""
    capacity: int               # runs at once
    threads: int                # torch threads each run gets

    @classmethod
    def check(cls, cfg: LauncherConfig) -> object:
        """Everything that can be checked before a run is touched: a ConfigError of one line if it cannot launch.
        What it returns is the launcher's own."""

    @classmethod
    def start(cls, launch: Launch) -> "Launcher":
        """The launcher, ready for the launch's runs."""

    @classmethod
    def warm(cls) -> None:
        """What can start beside the suite's own set-up (local.py: its workers' imports), called only where every
        run is still to do (a new store); a launcher with nothing to start beside it does nothing."""

    def submit(self, fn: Callable[..., dict], *args) -> Work:
        """fn(*args) started; a submission that fails is a Work whose result() raises."""

    def describe(self) -> str:
        """Where the runs go, for the suite's `launching on ...` line."""

    def interrupt(self) -> None:
        """The suite's Ctrl-C passed on to the runs in progress, which finish their step and end KILLED."""

    def shutdown(self, cancel: bool = False) -> None:
        """Done with: waits for the runs in progress, or with cancel stops them."""


LAUNCHERS: dict[str, type[Launcher]] = {}


def register(name: str) -> Callable[[type], type]:
    """A launcher's class decorator: the launcher `launcher.name=<name>` chooses."""

    def add(cls: type) -> type:
        LAUNCHERS[name] = cls
        return cls

    return add


def find(name: str) -> type[Launcher]:
    """The launcher of that name; a ConfigError of one line naming the known ones if there is none. Every module of
    this package is imported first, so that each registers itself."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    if name not in LAUNCHERS:
        *others, last = sorted(LAUNCHERS)
        known = f"{', '.join(others)} or {last}" if others else last
        raise ConfigError(f"launcher.name={name!r} must be {known} (the launchers of lm/suite/launchers/)")
    return LAUNCHERS[name]
