"""The suite end to end at toy size: its MLflow layout, resuming in place, and doing no work twice."""
import mlflow
import pytest
from mlflow.tracking import MlflowClient

from lm.commands import suite
from tests.conftest import copied

ARGS = ["quick=true", "ablations=[baseline,nomask,temperature]"]


@pytest.fixture(scope="module")
def store(quick_store, tmp_path_factory):
    """A copy of the session's quick store (tests/conftest.py), to change: every exercise's quick runs, those of
    ARGS among them, trained by `suite.main(["quick=true"])` (its own suite here cost 26 s, CI of 2026-12-04)."""
    path = copied(quick_store, tmp_path_factory.mktemp("suite"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TINYGPT_STORE", str(path))
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        yield MlflowClient(f"sqlite:///{path}/mlflow.db"), mp


def children(client, name):
    exp = client.get_experiment_by_name(name)
    runs = client.search_runs([exp.experiment_id])
    return [r for r in runs if r.data.tags.get("role") != "exercise"], [r for r in runs if r.data.tags.get("role") == "exercise"]


def test_one_experiment_per_exercise_with_a_parent_and_nested_children(store):
    client, _ = store
    for name, names in {"quick/baseline": ["base/seed1"], "quick/nomask": ["masked/seed1", "nomask/seed1"],
                        "quick/temperature": ["t05/seed1", "t10/seed1", "t15/seed1"]}.items():
        kids, parents = children(client, name)
        assert len(parents) == 1 and parents[0].info.status == "FINISHED"
        assert sorted(r.info.run_name for r in kids) == sorted(names)
        for r in kids:
            assert r.info.status == "FINISHED"
            assert r.data.tags["mlflow.parentRunId"] == parents[0].info.run_id
            assert r.data.tags["ablation"] == name.split("/")[1]
            assert r.data.tags["variant"] == r.info.run_name.split("/")[0] and r.data.tags["seed"] == "1"
            assert len(r.data.tags["config_hash"]) == 12 and r.data.tags["mlflow.source.git.commit"]


def test_every_run_has_the_same_param_names(store):
    client, _ = store
    keys = [frozenset(r.data.params) for name in ("quick/baseline", "quick/nomask", "quick/temperature")
            for r in children(client, name)[0]]
    assert len(set(keys)) == 1
    assert {"mask", "pos_emb", "n_head", "n_layer", "n_embd", "block_size", "model.mask", "train.lr"} <= keys[0]


def test_temperature_samples_the_baseline_of_the_same_seed(store):
    client, _ = store
    base = children(client, "quick/baseline")[0][0]
    for r in children(client, "quick/temperature")[0]:
        assert r.data.tags["init_from_run"] == base.info.run_id
        assert "word_validity" in r.data.metrics and "train_loss" not in r.data.metrics


def test_a_second_call_trains_nothing_and_says_so(store, capsys):
    client, _ = store
    before = {r.info.run_id: r.info.end_time for name in ("quick/baseline", "quick/nomask")
              for r in children(client, name)[0]}
    assert suite.main(ARGS) == 0
    assert "nothing to run: every run is already finished" in capsys.readouterr().out
    after = {r.info.run_id: r.info.end_time for name in ("quick/baseline", "quick/nomask")
             for r in children(client, name)[0]}
    assert after == before


def test_an_interrupted_run_is_trained_again_in_place(store, capsys):
    client, _ = store
    kids = {r.info.run_name: r for r in children(client, "quick/nomask")[0]}
    victim, bystander = kids["nomask/seed1"], kids["masked/seed1"]
    client.set_terminated(victim.info.run_id, "KILLED")
    assert suite.main(ARGS) == 0
    assert "1 to run" in capsys.readouterr().out
    kids = {r.info.run_name: r for r in children(client, "quick/nomask")[0]}
    assert len(kids) == 2 and kids["nomask/seed1"].info.run_id == victim.info.run_id
    assert kids["nomask/seed1"].info.status == "FINISHED"
    assert kids["masked/seed1"].info.end_time == bystander.info.end_time
    history = client.get_metric_history(victim.info.run_id, "train_loss")
    assert sorted(m.step for m in history) == list(range(1, 21))   # each step once, even after the rerun



def test_a_deleted_run_is_trained_anew(store, capsys):
    """Deleting a run (in the UI, or `mlflow runs delete`) is how a user asks for it again."""
    client, _ = store
    kids = {r.info.run_name: r for r in children(client, "quick/nomask")[0]}
    client.delete_run(kids["masked/seed1"].info.run_id)
    assert suite.main(ARGS) == 0
    assert "1 to run" in capsys.readouterr().out
    again = {r.info.run_name: r for r in children(client, "quick/nomask")[0]}
    assert len(again) == 2 and again["masked/seed1"].info.run_id != kids["masked/seed1"].info.run_id
    assert again["masked/seed1"].info.status == "FINISHED"
    assert again["nomask/seed1"].info.end_time == kids["nomask/seed1"].info.end_time

@pytest.mark.parametrize("args,message", [
    (["ablations=[nomask,nomsk]"], "unknown ablation 'nomsk'"),
    (["model.n_heads=2"], "unknown config key 'model.n_heads'"),
    (['overrides=["train.steps=-5"]'], "train.steps=-5 must be positive"),
    (["seeds=0"], "seeds=0 must be positive"),
    (["workers=two"], "workers='two' is not an integer"),
])
def test_bad_input_starts_nothing(args, message, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "store"))
    assert suite.main(["quick=true", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and message in err and "\n" not in err
    assert not (tmp_path / "store").exists()


def test_a_variant_two_exercises_share_is_trained_once_and_copied(store, capsys):
    """nopos002's pos and heads' h4 are lesson 002's base model at the same steps: one trains, the other gets its
    results. Deleted, the copy is made again from the finished one, and nothing is trained."""
    client, _ = store
    client.delete_run({r.info.run_name: r for r in children(client, "quick/heads")[0]}["h4/seed1"].info.run_id)
    assert suite.main(["quick=true", "ablations=[nopos002,heads]"]) == 0
    out = capsys.readouterr().out
    assert "quick/heads/h4/seed1: copied from quick/nopos002/pos/seed1 (the same config)" in out
    assert "5 already done, 1 to run" in out
    pos = {r.info.run_name: r for r in children(client, "quick/nopos002")[0]}["pos/seed1"]
    h4 = {r.info.run_name: r for r in children(client, "quick/heads")[0]}["h4/seed1"]
    assert h4.info.status == "FINISHED" and h4.data.tags["copied_from"] == pos.info.run_id
    assert (h4.data.tags["variant"], h4.data.params["tracking.experiment"]) == ("h4", "quick/heads")
    assert h4.data.tags["config_hash"] == pos.data.tags["config_hash"] and h4.data.metrics == pos.data.metrics
    for key in ("train_loss", "val_loss"):
        assert ([(m.step, m.value) for m in client.get_metric_history(h4.info.run_id, key)] ==
                [(m.step, m.value) for m in client.get_metric_history(pos.info.run_id, key)])
    assert ({a.path for a in client.list_artifacts(h4.info.run_id)} ==
            {a.path for a in client.list_artifacts(pos.info.run_id)} >= {"model.pt", "heads.csv", "samples.txt"})
    assert suite.main(["quick=true", "ablations=[nopos002,heads]"]) == 0   # and a second call has nothing to do
    assert "nothing to run" in capsys.readouterr().out
