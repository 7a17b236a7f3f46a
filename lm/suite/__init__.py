"""Many runs: the suite of exercises, grid sweeps, and the launchers that run them (worker processes, submitit).
Imports one run and everything below it.

The suite as a library, as `make ablations`, sweeps and `make decide` use it, and as a notebook may:

    from lm.suite import SuiteSpec, plan, run

    spec = SuiteSpec(ablations=["nopos", "heads"], quick=True, tracking_uri="sqlite:////tmp/store/mlflow.db")
    plan(spec).runs               # ['quick/nopos/pos/seed1', ...]: composed and checked, nothing touched
    result = run(spec)            # the runs, trained into the store (echo=False: nothing printed)
    [(r.variant, r.seed, r.state, r.metrics["val_loss"]) for r in result.runs]
    result.means["quick/heads"]["h4/val_loss"]   # Mean(mean=2.962, std=None, seeds=1); str(): '2.962 (1 seed)'
    result.means_table()          # the same as a pandas table: experiment, variant, metric, mean, std, seeds
    result.status                 # ExitStatus.OK; FAILED, INTERRUPTED: what `make ablations` exits with

A second run(spec) trains nothing: every run's state is then State.FINISHED. In a script, call it under `if
__name__ == "__main__":` (the workers come from multiprocessing's fork server, which imports the script again);
a notebook needs nothing. load_suite_config(["seeds=3", "launcher=submitit_local", "train.lr=0.01"]) makes a spec
from the command line's words, conf/ and its launchers included; a spec's `exercises` runs exercises of the caller's own
(lm.settings.exercises.Exercise) instead of ablations'. docs/exercises.md, "The suite from Python", says more.
"""
from lm.suite.result import ExitStatus, RunOutcome, SuiteResult
from lm.suite.runner import run
from lm.suite.jobs import State
from lm.suite.launchers import LauncherConfig
from lm.suite.planning import Plan, plan
from lm.suite.settings import SuiteSpec, load_suite_config

__all__ = ["ExitStatus", "LauncherConfig", "Plan", "RunOutcome", "State", "SuiteResult", "SuiteSpec",
           "load_suite_config", "plan", "run"]
