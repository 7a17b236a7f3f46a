"""The stores the reliability tests share: one the quick suite reached through a run of kills, and one it reached
in peace, with two suites started at once on it. Each is made once per test session."""
import shutil

import pytest

from tests.reliability import harness

# (fault, workers): each restart of the same suite command gets the next one. Kills at a step, during validation,
# while writing a checkpoint, before a write to MLflow and during a run's final measurements; one Ctrl-C.
# validation:3 comes first, on the new store, where every run validates from its start: on a restart, how many
# validations are left depends on how far each killed run had got, and once the suite's workers started faster
# (2026-12-04) no run was left to reach a third validation batch.
KILLS = [
    ("validation:3", 1),        # during validation, after the steps' losses were logged and before val_loss was
    ("step:12", 2),             # a SIGKILL mid-step to the suite and a worker: the other worker must die on its own
    ("checkpoint:2:group", 1),  # while a checkpoint is written, to the whole process group at once
    ("step:5:sigint", 1),       # Ctrl-C: the step ends, the run is KILLED, the suite exits 130
    ("logging:4", 1),           # just before a write to MLflow
    ("logging:5", 1),           # the same, later: into a run's final measurements
]


@pytest.fixture(scope="session")
def kill_loop(tmp_path_factory):
    """The quick suite (6 runs) killed at a different point each time it is restarted, then restarted once more."""
    store = tmp_path_factory.mktemp("killed") / "store"
    steps = []
    for fault, workers in [*KILLS, (None, 1)]:
        o = harness.run("lm.commands.suite", [*harness.QUICK, f"workers={workers}"], store, fault)
        o.survivors = harness.wait_for_group(o.pgid)  # a killed suite's processes, alive 15 s on
        o.running = harness.running_children(store)
        o.fault, o.workers = fault, workers
        steps.append(o)
    return store, steps, harness.audit(store, harness.QUICK)


@pytest.fixture(scope="session")
def clean_store(tmp_path_factory):
    """Two suites started at once on one new store, as from two terminals; neither is interrupted."""
    store = tmp_path_factory.mktemp("clean") / "store"
    started = [harness.start("lm.commands.suite", [*harness.QUICK, "workers=2"], store) for _ in range(2)]
    outcomes = [harness.finish(*s) for s in started]
    return store, outcomes, harness.audit(store, harness.QUICK)


@pytest.fixture(scope="session")
def interrupted_train(tmp_path_factory):
    """`lm.commands.train` at toy size, stopped by a Ctrl-C that comes as it writes steps 1-10's losses to MLflow: a KILLED run
    with its checkpoint, in a store of its own."""
    store = tmp_path_factory.mktemp("ctrl-c") / "store"
    return store, harness.run("lm.commands.train", harness.TINY, store, fault="logging:3:sigint")


@pytest.fixture
def fresh(tmp_path):
    store = tmp_path / "store"
    yield store
    shutil.rmtree(store, ignore_errors=True)
