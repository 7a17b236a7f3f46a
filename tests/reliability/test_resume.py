"""Resume a long run from its checkpoint, not from step 0, onto the curve it would have followed; and Ctrl-C: the
logging in progress finishes, the run is KILLED, one line says how to resume, the exit status is 130."""
import re
import shlex

import pytest
import torch
from mlflow.tracking import MlflowClient

from lm.commands import makeargs, train
from lm.run.callbacks import StepRecorder
from tests.reliability import harness

LONG = ["model.n_embd=32", "model.n_layer=1", "model.block_size=32", "train.batch_size=8", "train.steps=1000",
        "eval.every=100", "eval.val_batches=2", "eval.val_batch_size=16", "eval.head_windows=8", "sample.length=50",
        "runtime.progress=false", "runtime.threads=1", "tracking.experiment=long"]


@pytest.fixture
def local(fresh, monkeypatch):
    monkeypatch.setenv("TINYGPT_STORE", str(fresh))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return fresh, MlflowClient(harness.uri(fresh))


@pytest.fixture
def spy(monkeypatch):
    """The step each training session starts from, and how many steps it trains."""
    seen = {"start": [], "steps": 0}
    start, end = StepRecorder.on_train_start, StepRecorder.on_train_batch_end

    def on_train_start(self, trainer, pl_module):
        seen["start"].append(trainer.global_step)
        start(self, trainer, pl_module)

    def on_train_batch_end(self, *args):
        seen["steps"] += 1
        end(self, *args)

    monkeypatch.setattr(StepRecorder, "on_train_start", on_train_start)
    monkeypatch.setattr(StepRecorder, "on_train_batch_end", on_train_batch_end)
    return seen


def curve(client, run_id, key):
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def runs(client, experiment):
    exp = client.get_experiment_by_name(experiment)
    return {r.info.run_name: r for r in client.search_runs([exp.experiment_id])}


def test_a_long_run_killed_after_a_checkpoint_resumes_from_it_onto_the_same_curve(local, spy):
    store, client = local
    assert train.main([*LONG, "tracking.run_name=whole"]) == 0
    o = harness.run("lm.commands.train", [*LONG, "tracking.run_name=killed"], store, fault="step:650")
    assert o.killed and [f.split()[0] for f in o.fired] == ["step:650:kill"], o.err[-3000:]
    killed = runs(client, "long")["killed"]
    assert killed.info.status == "RUNNING"  # as a SIGKILL leaves it, with the checkpoint of step 600
    ckpt = store / "checkpoints" / killed.info.run_id / "last.ckpt"
    assert torch.load(ckpt, weights_only=True, map_location="cpu")["global_step"] == 600

    spy["start"], spy["steps"] = [], 0
    assert train.main([*LONG, "tracking.run_name=killed", "--resume", killed.info.run_id]) == 0
    assert spy["start"] == [600] and spy["steps"] == 400  # from the checkpoint, not from step 0

    by_name = runs(client, "long")
    assert len(by_name) == 2 and by_name["killed"].info.status == "FINISHED"
    whole, resumed = by_name["whole"].info.run_id, by_name["killed"].info.run_id
    spread = 0.0
    for key in ("train_loss", "val_loss"):
        a, b = curve(client, whole, key), curve(client, resumed, key)
        assert [s for s, _ in b] == [s for s, _ in a] == (list(range(1, 1001)) if key == "train_loss"
                                                          else list(range(0, 1001, 100)))
        spread = max([spread, *(abs(x - y) for (_, x), (_, y) in zip(a, b))])
    final = abs(by_name["whole"].data.metrics["val_loss"] - by_name["killed"].data.metrics["val_loss"])
    harness.record("resume", steps=1000, killed_at_step=650, resumed_from_step=spy["start"][0],
                   steps_trained_again=spy["steps"], curve_spread=max(spread, final))
    assert spread <= 1e-6 and final <= 1e-6
    assert not (store / "checkpoints" / resumed).exists()


def test_ctrl_c_finishes_the_logging_call_marks_the_run_killed_and_says_how_to_resume(interrupted_train,
                                                                                   monkeypatch):
    """SIGINT arrives just before the write of steps 1-10's losses: that write completes, the step ends with its
    validation and checkpoint, the run is KILLED, and the one line on stderr is the command that resumes it."""
    store, o = interrupted_train
    client = MlflowClient(harness.uri(store))
    assert [f.split()[0] for f in o.fired] == ["logging:3:sigint"]
    assert o.rc == 130, o.err[-3000:]
    lines = o.lines()
    assert len(lines) == 1, lines
    m = re.fullmatch(r"stopped by SIGINT at step (\d+); resume with: (make train .*)", lines[0])
    assert m, lines[0]
    # What the user's shell makes of the line, then what make hands lm.makeargs
    shell = shlex.split(m[2])
    given = dict(w.split("=", 1) for w in shell[2:])
    step, run_id, args = int(m[1]), given["RESUME"], makeargs.words(given["ARGS"])
    assert args == harness.TINY, args
    run = client.get_run(run_id)
    assert run.info.status == "KILLED" and run.data.tags["failure_reason"] == f"stopped by SIGINT at step {step}"
    assert step == 10  # the signal came in step 10's logging call, which finished; then step 10's validation
    assert [s for s, _ in curve(client, run_id, "train_loss")] == list(range(1, 11))
    assert [s for s, _ in curve(client, run_id, "val_loss")] == [0, 10]
    assert torch.load(store / "checkpoints" / run_id / "last.ckpt", weights_only=True)["global_step"] == step

    monkeypatch.setenv("TINYGPT_STORE", str(store))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert train.main([*args, "--resume", run_id]) == 0  # what the line says to run
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and "failure_reason" not in run.data.tags
    assert [s for s, _ in curve(client, run_id, "train_loss")] == list(range(1, 31))
    assert [s for s, _ in curve(client, run_id, "val_loss")] == [0, 10, 20, 30]
    harness.record("ctrl_c", exit_status=o.rc, stderr_lines=len(lines), stopped_at_step=step, resumed="FINISHED")


def test_a_run_killed_before_its_first_validation_still_gets_one_on_resume(local):
    """The kill comes after the run's first metrics (n_params, baselines) are logged, before the untrained model's
    validation loss: the resumed run must still measure it, once."""
    store, client = local
    o = harness.run("lm.commands.train", [*harness.TINY, "tracking.run_name=early"], store, fault="logging:2")
    assert o.killed and [f.split()[0] for f in o.fired] == ["logging:2:kill"], o.err[-3000:]
    run = runs(client, "tiny")["early"]
    assert "n_params" in run.data.metrics and "val_loss" not in run.data.metrics
    assert train.main([*harness.TINY, "tracking.run_name=early", "--resume", run.info.run_id]) == 0
    assert [s for s, _ in curve(client, run.info.run_id, "val_loss")] == [0, 10, 20, 30]
    assert [s for s, _ in curve(client, run.info.run_id, "n_params")] == [0]
