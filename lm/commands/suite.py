"""`make ablations`: every exercise's runs, several seeds each, tracked in MLflow, resumable and parallel.

    python -m lm.commands.suite [ablations=[nomask,heads]] [seeds=1] [quick=true] [workers=2] [train.lr=0.01 ...]

The suite itself is lm/suite/suite.py; this is its command line.
"""
import sys
import time

from omegaconf import OmegaConf
from tqdm import tqdm

from lm import process
from lm.run import devices
from lm.spec.config import ConfigError
from lm.spec.errors import USER_ERRORS
from lm.spec.exercises import Exercise
from lm.suite import launchers
from lm.suite.suite import (
    CtrlC,
    State,
    attach,
    dispatch,
    exclusive,
    finished_children,
    load_suite_config,
    pair_twins,
    plan,
    summarise,
)
from lm.tracking import store_check
from lm.tracking import aggregates, views


def main(argv: list[str] | None = None, chosen: list[Exercise] | None = None, files: dict[str, str] | None = None,
         ) -> int:
    """chosen: exercises that are not in experiments/ (a sweep's grid, from lm/suite/sweep.py), run instead of those
    `ablations` names; files: text files, by name, logged on their parent runs (a sweep's exercise.yaml)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    show = any(a in ("--cfg", "-c") for a in argv)  # print the suite's config and its runs; train nothing
    argv = [a for a in argv if a not in ("--cfg", "-c", "job", "all")] if show else argv
    started = time.time()
    try:
        s = load_suite_config(argv)
        if s.launcher.name == "submitit":  # before any run is touched: a launcher that cannot launch is one line
            from lm.suite.submitit_launcher import SubmititLauncher
            SubmititLauncher.check(s.launcher)
        elif s.launcher.name != "local":
            raise ConfigError(f"launcher.name={s.launcher.name!r} must be local or submitit")
        chosen, jobs = plan(s, chosen)
        planned = time.time() - started
        if show:
            print(store_check.redact(process.to_yaml({**OmegaConf.to_container(OmegaConf.structured(s)),
                                                      "runs": [f"{j.experiment}/{j.spec.name}" for j in jobs]})))
            return 0
        # The heavy imports, torch, Lightning and MLflow (5 s), once the arguments, every run's config and the
        # server's answer to this login are known to be good: a mistake above is one line at once.
        store_check.check_server(store_check.resolve_uri(s.tracking_uri))
        from lm.run import train
        from lm.tracking.store import Store

        for data in {j.cfg.data.sha256: j.cfg for j in jobs}.values():
            train.prepare(data)
        store = Store(s.tracking_uri, jobs[0].cfg.tracking.checkpoint_dir)
        imported = time.time()
    except USER_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted before any run started", file=sys.stderr)
        return 130
    with exclusive(store) as workers_lock, CtrlC() as ctrl_c:
        listed: dict[str, list] = {}
        parents = attach(store, chosen, jobs, "quick/" if s.quick else "", listed)
        for run_id in parents.values():
            for name, text in (files or {}).items():
                store.client.log_text(run_id, text, name)
        pair_twins(jobs)
        todo = [j for j in jobs if j.state == State.PENDING]
        print(f"{len(jobs)} runs in {len(chosen)} exercises ({store.shown}): "
              f"{len(jobs) - len(todo)} already done, {len(todo)} to run", flush=True)
        finished = not ctrl_c.count  # a Ctrl-C before now: no run starts
        if todo and finished:
            if s.launcher.name == "submitit":
                from lm.suite.submitit_launcher import SubmititLauncher
                launcher = SubmititLauncher(s.launcher, workers_lock)
            else:
                gpus = devices.share_gpus(todo[0].cfg.runtime.accelerator)
                workers, threads = launchers.plan_workers(len(todo), s.workers, s.threads, len(gpus))
                launcher = launchers.LocalPool(workers, threads, workers_lock)
            print(f"launching on {launcher.describe()}", flush=True)
            for job in todo:  # more threads than cores make OpenMP spin instead of compute
                job.cfg.runtime.threads = launcher.threads
            # The bar counts estimated work, not runs, so its ETA holds when big and small runs mix.
            with tqdm(total=sum(j.cost for j in todo), position=0, disable=not sys.stdout.isatty(),
                      bar_format="{desc} {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]") as bar:
                try:
                    finished = dispatch(jobs, launcher, bar, store, ctrl_c)
                finally:
                    launcher.shutdown(cancel=not finished)
        for job in jobs:  # created RUNNING, never started (skipped, or interrupted on its way): none is left RUNNING
            if job.run_id and job.state in (State.PENDING, State.SKIPPED):
                store.end_run(job.run_id, "KILLED" if job.state == State.PENDING else "FAILED",
                              job.result.get("reason") or "not started: the suite was interrupted")
        means = {}
        for ex in chosen:  # each variant's mean, std and seed count, on the exercise's parent run; the views' ranges
            name = f"{'quick/' if s.quick else ''}{ex.name}"
            ran = [j for j in todo if j.experiment == name and j.run_id]
            children = finished_children(store, parents[name], listed[name], ran)
            means[name] = aggregates.refresh(store, parents[name], ex, children)
            if ran:  # the charts' ranges read every run's curve: only when a run of this suite changed them
                views.refresh(store.client, store.client.get_run(parents[name]).info.experiment_id, ex, children)
        for name, run_id in parents.items():
            states = [j.state for j in jobs if j.experiment == name]
            status = "KILLED" if State.KILLED in states or State.PENDING in states else (
                "FAILED" if State.FAILED in states or State.SKIPPED in states else "FINISHED")
            store.end_run(run_id, status)
    print(summarise(store, jobs, means))
    wall = time.time() - started
    done = [j for j in todo if j.state == State.DONE]
    copied = sum(j.twin is not None for j in done)
    serial = sum(j.result.get("seconds", 0) for j in todo)
    if todo:
        print(f"\n{len(done)} of {len(todo)} runs done in {wall / 60:.1f} min, {len(done) - copied} trained and "
              f"{copied} copied from a twin ({len(done) / wall * 3600:.0f} runs/hour; one after another they took "
              f"{serial / 60:.1f} min)")
    else:
        # the bookkeeping alone: the plan, and all after the imports and the store's opening (make bench's scale rows)
        print(f"\nnothing to run: every run is already finished (see `make ui` or `make report`); {len(jobs)} runs "
              f"checked in {planned + time.time() - imported:.1f} s")
    if not finished:
        print("interrupted: finished runs are kept; run the same command again to resume the rest", file=sys.stderr)
        return 130
    if ctrl_c.count:  # it came as the suite ended: nothing was stopped
        print("interrupted: every run had already finished", file=sys.stderr)
        return 130
    failed = [j for j in jobs if j.state.gave_up]  # a run stopped by a scheduler's signal (KILLED) too
    return 1 if failed else 0

if __name__ == "__main__":
    process.finish(main())
