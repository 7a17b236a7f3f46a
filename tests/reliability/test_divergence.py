"""A config that blows up ends FAILED with the reason `loss became … at step k`, stays FAILED (no suite trains it
again), the suite carries on and says so, and the report lists the run as failed."""
import re

import pytest
from mlflow.tracking import MlflowClient

from lm.commands import suite, train
from tests.reliability import harness

BLOWS_UP = [*harness.QUICK, "workers=1", "overrides=['train.lr=10']"]
REASON = re.compile(r"loss became (NaN|inf|[-+.e\d]+) at step \d+")


@pytest.fixture
def local(fresh, monkeypatch):
    monkeypatch.setenv("TINYGPT_STORE", str(fresh))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return fresh, MlflowClient(harness.uri(fresh))


def children(client):
    return {(e.name, r.info.run_name): r for e in client.search_experiments()
            for r in client.search_runs([e.experiment_id]) if r.data.tags.get("role") != "exercise"}


def test_lr_10_fails_with_its_reason_the_suite_carries_on_and_the_report_shows_it(local, capsys, tmp_path):
    store, client = local
    assert suite.main(BLOWS_UP) == 1
    out = capsys.readouterr().out
    runs = children(client)
    assert len(runs) == 6 and all(r.info.status == "FAILED" for r in runs.values())
    trained = {k: r for k, r in runs.items() if k[0] != "quick/temperature"}
    for (exp, name), r in trained.items():  # each diverged, and the suite went on to the next
        assert r.data.tags["diverged"] == "true" and REASON.fullmatch(r.data.tags["failure_reason"].split(" (")[0])
        assert f"{exp}/{name}: failed" in out
    for (exp, name), r in runs.items():  # what read the diverged model: failed too, with why, none left RUNNING
        if exp == "quick/temperature":
            assert r.data.tags["failure_reason"] == "baseline seed 1 did not finish"
    assert not harness.running_children(store)
    for variant in ("base", "masked", "nomask", "t05"):  # the summary: 1 seed, 0 finished, no val_loss
        assert re.search(rf"\b{variant}\s+1\s+0\s+-\n", out), out

    ended = {k: r.info.end_time for k, r in trained.items()}
    assert suite.main(BLOWS_UP) == 1  # again: what diverged stays as it was, with its reason
    assert "3 already done, 3 to run" in capsys.readouterr().out
    assert {k: r.info.end_time for k, r in children(client).items() if k in trained} == ended

    from analysis import report
    assert report.main(["quick=true", "ablations=[baseline,nomask,temperature]", f"out={tmp_path / 'report'}",
                        "log=false"]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    failed = text[text.index("Failed and unfinished runs"):]
    for (exp, name), r in trained.items():
        assert r.info.run_id in failed and r.data.tags["failure_reason"][:20] in failed
    harness.record("divergence", config="train.lr=10", runs_failed=len(trained),
                   reasons=sorted({r.data.tags["failure_reason"] for r in trained.values()}))


def test_a_nan_loss_is_reported_as_nan_at_its_step(local, capsys):
    store, client = local
    assert train.main([*harness.TINY, "train.lr=1e6"]) == 1
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(r"error: run \w+ failed: loss became NaN at step 2", err), err
    (run,) = children(client).values()
    assert run.info.status == "FAILED" and run.data.tags["diverged"] == "true"
    assert run.data.tags["failure_reason"] == "loss became NaN at step 2"
    harness.record("divergence", nan_config="train.lr=1e6", nan_reason=run.data.tags["failure_reason"])
