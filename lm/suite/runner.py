"""A suite from its spec to its result (lm.suite.run): the plan, the store held, the runs dispatched to a launcher,
each exercise's parent run and means brought up to date, the closing table. `make ablations` is this with its lines
shown; a caller may ask for none (echo=False)."""
import sys
import time

from tqdm import tqdm

from lm import process
from lm.suite import launchers
from lm.suite.result import ExitStatus, RunOutcome, SuiteResult
from lm.suite.bookkeeping import Parent, exclusive, final_runs, find_runs, finished_children
from lm.suite.interrupt import CtrlC
from lm.suite.jobs import Job, State, pair_twins
from lm.suite.planning import Plan, plan
from lm.suite.scheduler import dispatch
from lm.suite.settings import SuiteSpec
from lm.tracking import aggregates, reference, store_check, views

NOT_STARTED = "interrupted before any run started"


class Echo:
    """The suite's lines: on stdout (or stderr) as `make ablations` shows them, or nowhere."""

    def __init__(self, on: bool):
        self.on = on

    def __call__(self, text: str, err: bool = False) -> None:
        if self.on:
            print(text, file=sys.stderr if err else sys.stdout, flush=True)

    def above_bar(self, text: str) -> None:
        """A line above the suite's bar (a run finished, the suite stopping)."""
        if self.on:
            tqdm.write(text)


def run(spec: SuiteSpec, echo: bool = True) -> SuiteResult:
    """The suite spec asks for, run: each finished run skipped, each interrupted one trained again in place, a run two
    exercises share trained once and copied, one suite per store at a time, Ctrl-C kept for the runs to stop at their
    step. Bad input raises its error (lm.settings.errors.USER_ERRORS) before any run is touched; a Ctrl-C before any run
    started is a result with no runs. echo: the lines `make ablations` prints (a bar with an ETA on a terminal, a
    line per finished run, the closing table); False: none, and no run's own bar."""
    started = time.time()
    say = Echo(echo)
    try:
        p = plan(spec)
        uri = store_check.resolve_uri(spec.tracking_uri)
        launcher = launchers.find(spec.launcher.name)
        if store_check.is_new(uri):
            launcher.warm()   # beside the imports and the store below: every run is to do
        # The heavy imports, torch and MLflow (Lightning is the workers'), once the arguments, every run's config and
        # the server's answer to this login are known to be good: a mistake above is one line at once.
        store_check.check_server(uri)
        with process.heavy_imports():
            from lm.model.data import prepare   # torch, not Lightning: the workers import that
            from lm.tracking.store import Store

        for data in {j.cfg.data.sha256: j.cfg for j in p.jobs}.values():
            prepare(data)
        store = Store(spec.tracking_uri, p.jobs[0].cfg.tracking.checkpoint_dir)
        imported = time.time()
    except KeyboardInterrupt:
        say(NOT_STARTED, err=True)
        return SuiteResult([], {}, "", time.time() - started, ExitStatus.INTERRUPTED)
    return _run_on_store(p, store, say, started, imported)


def _run_on_store(p: Plan, store, say: Echo, started: float, imported: float) -> SuiteResult:
    """The plan run on the store, which it holds while its runs run; the closing lines once it lets go."""
    jobs = p.jobs
    with exclusive(store, say.on) as workers_lock, CtrlC() as ctrl_c:
        listed: dict[str, list] = {}
        parents = find_runs(store, p.exercises, jobs, p.spec.quick, listed, p.spec.files)
        pair_twins(jobs)
        todo = [j for j in jobs if j.state == State.PENDING]
        say(f"{len(jobs)} runs in {len(p.exercises)} exercises ({store.shown}): "
            f"{len(jobs) - len(todo)} already done, {len(todo)} to run")
        finished = not ctrl_c.count  # a Ctrl-C before now: no run starts
        if todo and finished:
            finished = _launch(p.spec, jobs, todo, store, ctrl_c, workers_lock, say)
        means = _close(store, p, parents, listed, todo)
    runs = final_runs(store, jobs)
    table = summarise(jobs, runs, means)
    say(table)
    wall = time.time() - started
    record_overhead(store, todo, runs, wall)
    done = [j for j in todo if j.state == State.DONE]
    copied = sum(j.twin is not None for j in done)
    serial = sum(j.result.get("seconds", 0) for j in todo)
    if todo:
        say(f"\n{len(done)} of {len(todo)} runs done in {wall / 60:.1f} min, {len(done) - copied} trained and "
            f"{copied} copied from a twin ({len(done) / wall * 3600:.0f} runs/hour; one after another they took "
            f"{serial / 60:.1f} min)")
    else:
        # the bookkeeping alone: the plan, and all after the imports and the store's opening (make bench's scale rows)
        say(f"\nnothing to run: every run is already finished (see `make ui` or `make report`); {len(jobs)} runs "
            f"checked in {p.seconds + time.time() - imported:.1f} s")
    if not finished:
        say("interrupted: finished runs are kept; run the same command again to resume the rest", err=True)
        status = ExitStatus.INTERRUPTED
    elif ctrl_c.count:  # it came as the suite ended: nothing was stopped
        say("interrupted: every run had already finished", err=True)
        status = ExitStatus.INTERRUPTED
    else:  # a run stopped by a scheduler's signal (KILLED) failed too
        status = ExitStatus.FAILED if any(j.state.gave_up for j in jobs) else ExitStatus.OK
    return SuiteResult([outcome(j, r) for j, r in zip(jobs, runs)], means, table, wall, status)


OVERHEAD_TAG = "suite.overhead_s"


def record_overhead(store, todo: list[Job], runs: list, wall: float) -> None:
    """The suite's own time beside the span of the runs it trained (its imports, its workers' start, its end in the
    store), on the parent run of each exercise it trained: what `plan=true` estimates the next suite's with
    (lm/suite/estimate.py)."""
    ran = {j.run_id for j in todo if j.twin is None and j.state == State.DONE}
    spans = [(r.info.start_time, r.info.end_time) for r in runs if r is not None and r.info.run_id in ran
             and r.info.end_time]
    if not spans:
        return
    overhead = max(0.0, wall - (max(e for _, e in spans) - min(s for s, _ in spans)) / 1000)
    for parent in {j.parent.run_id for j in todo if j.parent is not None and j.parent.run_id}:
        store.client.set_tag(parent, OVERHEAD_TAG, f"{overhead:.1f}")


def _launch(spec: SuiteSpec, jobs: list[Job], todo: list[Job], store, ctrl_c: CtrlC, workers_lock: str,
            say: Echo) -> bool:
    """The pending jobs run on the spec's launcher, under the suite's bar; False if interrupted."""
    launcher = launchers.find(spec.launcher.name).start(launchers.Launch(
        spec.launcher, len(todo), spec.workers, spec.threads, todo[0].cfg.runtime.accelerator, workers_lock))
    say(f"launching on {launcher.describe()}")
    for job in todo:  # more threads than cores make OpenMP spin instead of compute
        job.cfg.runtime.threads = launcher.threads
        job.cfg.runtime.progress = job.cfg.runtime.progress and say.on  # silent: no run's own bar either
    finished = True
    # The bar counts estimated work, not runs, so its ETA holds when big and small runs mix.
    with tqdm(total=sum(j.cost for j in todo), position=0, disable=not (say.on and sys.stdout.isatty()),
              bar_format="{desc} {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]") as bar:
        try:
            finished = dispatch(jobs, launcher, bar, store, ctrl_c, say.above_bar)
        finally:
            launcher.shutdown(cancel=not finished)
    return finished


def _close(store, p: Plan, parents: dict[str, Parent], listed: dict[str, list], todo: list[Job]) -> dict[str, dict]:
    """The suite's end in the store, before it lets go: no run left RUNNING, each exercise's means (returned), its
    lessons' series and views brought up to date, each parent run ended as its children did, when the last of them
    ended (an exercise none of whose runs started has no parent run yet)."""
    for job in p.jobs:  # created RUNNING, never started (skipped, or interrupted on its way): none is left RUNNING
        if job.run_id and job.state in (State.PENDING, State.SKIPPED):
            store.end_run(job.run_id, "KILLED" if job.state == State.PENDING else "FAILED",
                          job.result.get("reason") or "not started: the suite was interrupted")
    means, last = {}, {}
    for ex in p.exercises:  # each variant's mean, std and seed count, on the exercise's parent run; the views' ranges
        name = p.experiment(ex.name)
        parent = parents[name].run_id
        if parent is None:
            continue
        ran = [j for j in todo if j.experiment == name and j.run_id]
        children = finished_children(store, parent, listed[name], ran)
        last[name] = max((r.info.end_time for r in children if r.info.end_time), default=None)
        means[name] = aggregates.refresh(store, parent, ex, children)
        reference.log(store.client, children, ex)
        if ran:  # the charts' ranges read every run's curve: only when a run of this suite changed them
            views.refresh(store.client, store.client.get_run(parent).info.experiment_id, ex, children)
    for name, parent in parents.items():
        if parent.run_id is None:
            continue
        states = [j.state for j in p.jobs if j.experiment == name]
        status = "KILLED" if State.KILLED in states or State.PENDING in states else (
            "FAILED" if State.FAILED in states or State.SKIPPED in states else "FINISHED")
        store.end_run(parent.run_id, status, end_time=last.get(name))
    return means


def outcome(job: Job, run) -> RunOutcome:
    """A job as the suite ended, with its MLflow run (None if it never got one)."""
    tags = run.data.tags if run else {}
    reason = None if job.state.succeeded else job.result.get("reason") or tags.get("failure_reason")
    return RunOutcome(job.experiment, job.spec.exercise, job.spec.variant, job.spec.seed, job.state, job.run_id,
                      dict(run.data.metrics) if run else {}, reason, tags.get("copied_from"))


def summarise(jobs: list[Job], runs: list, means: dict[str, dict[str, aggregates.Mean]]) -> str:
    """The closing table: per exercise and variant, its seeds, how many finished, and the validation loss as mean ±
    std over the finished seeds, read from `means` (each exercise's parent-run summaries, from aggregates.refresh:
    one computation for the table, the parent run and the UI). runs: each job's, from final_runs()."""
    import pandas as pd

    rows = []
    for job, run in zip(jobs, runs):
        rows.append({"exercise": job.experiment, "variant": job.spec.variant,
                     "status": run.info.status if run else job.state.name})
    table = pd.DataFrame(rows).groupby(["exercise", "variant"], sort=False).agg(
        seeds=("status", "size"), finished=("status", lambda s: int((s == "FINISHED").sum())))
    table["val_loss"] = [_mean_std(means.get(exercise, {}), variant) for exercise, variant in table.index]
    return table.to_string()


def _mean_std(parent: dict[str, aggregates.Mean], variant: str) -> str:
    """'1.234 ± 0.01 (3 seeds)': the parent run's summary of the variant's validation loss; '-' for none."""
    found = parent.get(f"{aggregates.prefix(variant)}/val_loss")
    return str(found) if found else "-"
