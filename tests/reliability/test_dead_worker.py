"""A dead worker costs one run: one of two workers of a running quick suite is SIGKILLed mid-step, as the kernel's
out-of-memory killer would. Its run ends FAILED with one line that says so, the others train on (the third on a
new worker in the dead one's place), the suite prints its summary and exits 1, and the store is left consistent:
the next suite trains that one run again, in place."""
import pytest
from mlflow.tracking import MlflowClient

from lm.suite import State, load_suite_config, plan
from lm.suite.bookkeeping import find_runs
from lm.tracking.store import Store
from tests.reliability import harness

ARGS = ["quick=true", "ablations=[small]", "workers=2"]
# Three runs of distinct configs, two at a time, of a model small enough that the workers' start-up is most of it.
EXERCISE = """title: three small runs
lesson: "none: for the dead-worker test"
measures: nothing
overrides: [model.n_embd=32, model.n_layer=1, model.block_size=32]
variants: {a: [], b: [train.lr=0.002], c: [train.lr=0.001]}
"""
REASON = "worker killed by signal 9 (SIGKILL): out of memory?"


@pytest.fixture(scope="module")
def dead_worker(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dead-worker")
    (folder / "experiments").mkdir()
    (folder / "experiments" / "small.yaml").write_text(EXERCISE)
    store = folder / "store"
    killed = harness.run("lm.commands.suite", ARGS, store, fault="step:5:oom", TINYGPT_EXPERIMENTS=folder / "experiments")
    client = MlflowClient(harness.uri(store))
    runs = {r.info.run_name: r for r in client.search_runs([client.get_experiment_by_name("quick/small").experiment_id])
            if r.data.tags.get("role") != "exercise"}
    return killed, runs, store, folder / "experiments"


def test_a_dead_worker_fails_its_run_alone_and_the_suite_ends_with_its_summary(dead_worker):
    killed, runs, _, _ = dead_worker
    assert [f.split()[0] for f in killed.fired] == ["step:5:oom"], killed.fired
    failed = {name: r.data.tags.get("failure_reason") for name, r in runs.items() if r.info.status == "FAILED"}
    finished = [name for name, r in runs.items() if r.info.status == "FINISHED"]
    harness.record("dead_worker", runs=len(runs), runs_failed=len(failed), runs_finished=len(finished),
                   exit_status=killed.rc, reason=next(iter(failed.values()), None))
    assert list(failed.values()) == [REASON] and len(finished) == 2, {n: r.info.status for n, r in runs.items()}
    assert killed.rc == 1, killed.err[-3000:]
    assert REASON in killed.out and "seeds  finished" in killed.out, killed.out[-3000:]
    assert "Traceback" not in killed.err and "BrokenProcessPool" not in killed.err + killed.out, killed.err[-3000:]


def test_the_next_suite_trains_only_the_lost_run_again_in_place(dead_worker, monkeypatch):
    _, runs, store, experiments = dead_worker
    monkeypatch.setenv("TINYGPT_EXPERIMENTS", str(experiments))
    p = plan(load_suite_config(ARGS[:2] + [f"tracking_uri={harness.uri(store)}"]))
    jobs = p.jobs
    find_runs(Store(harness.uri(store)), p.exercises, jobs, quick=True)
    pending = [j for j in jobs if j.state == State.PENDING]
    harness.record("dead_worker", runs_lost=sum(r.info.status != "FINISHED" for r in runs.values()) - len(pending),
                   to_train_again=len(pending))
    assert [j.run_id for j in pending] == [r.info.run_id for r in runs.values() if r.info.status == "FAILED"]
    assert all(j.run_id in {r.info.run_id for r in runs.values()} for j in jobs)  # no new run: no duplicate
