"""MLflow's UI as the comparison surface (issues 14, 25), on a real quick store of the heads exercise: `make ui`
prints each exercise's links, and the browser's check of the assistant panel can fail; the parent run carries each
variant's summary, the runs carry their corpus as datasets and their model in MLflow's PyTorch flavor. What a person
sees through every link, the bare address and a click from it is checked on every exercise's quick store
(test_ui_exercises.py), heads among them."""
import re

import pytest
from mlflow.tracking import MlflowClient

from lm.commands import ui
from lm.measures import model_flavor
from lm.tracking import aggregates, views
from tests.scaleout import browser
from tests.scaleout.helpers import Server, free_port

VARIANTS = ["h1", "h2", "h4", "h8"]


@pytest.fixture(scope="module")
def heads(quick_store, tmp_path_factory):
    """The quick suite's store (`make ablations-quick`), heads among its exercises, and `make ui` over it."""
    store = quick_store
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        mp.setenv("TINYGPT_STORE", str(store))
        srv = Server(store, tmp_path_factory.mktemp("ui") / "server.log")
        try:
            srv.wait()
            yield MlflowClient(f"sqlite:///{store / 'mlflow.db'}"), srv, mp
        finally:
            srv.stop()


def parent_and_children(client):
    exp = client.get_experiment_by_name("quick/heads")
    runs = client.search_runs([exp.experiment_id])
    return exp, next(r for r in runs if r.data.tags.get("role") == "exercise"), \
        [r for r in runs if r.data.tags.get("role") != "exercise"]


def test_every_experiment_is_tagged_as_model_training(heads):
    client, *_ = heads
    exp, *_ = parent_and_children(client)
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    assert views.has_view(exp) and views.has_view(exp, views.TABLE_KEY)


def test_the_parent_run_carries_each_variants_summary_as_a_tag_and_its_mean_on_its_metrics_panel(heads):
    """Each variant's summary as a tag, and its mean as the parent's metric (its Metrics panel); the charts views
    show the seeds' runs alone (their filter), so the parent's metrics make no chart of a single bar."""
    client, *_ = heads
    _, parent, children = parent_and_children(client)
    by_variant = {r.data.tags["variant"]: r.data.metrics for r in children}
    for v in VARIANTS:   # one seed: the mean alone, and the count
        assert parent.data.tags[f"{v}/val_loss"] == f"{aggregates.number(by_variant[v]['val_loss'])} (1 seed)"
        assert parent.data.tags[f"{v}/knockout_head_max"].endswith(" (1 seed)")
        assert parent.data.metrics[f"{v}/val_loss"] == pytest.approx(by_variant[v]["val_loss"])
    assert parent.info.run_name and "/seed" not in parent.info.run_name   # outside the charts' filter


def test_each_run_logs_its_corpus_as_training_and_validation_datasets(heads):
    _, _, children = parent_and_children(heads[0])
    for run in children:
        found = {d.dataset.name: d for d in run.inputs.dataset_inputs}
        assert set(found) == {"shakespeare/train", "shakespeare/validation"}
        for name, context in (("shakespeare/train", "training"), ("shakespeare/validation", "validation")):
            d = found[name]
            assert [t.value for t in d.tags if t.key == "mlflow.data.context"] == [context]
            assert d.dataset.digest == run.data.params["data.sha256"][:12]
            assert d.dataset.source_type == "http" and run.data.params["data.url"] in d.dataset.source


def test_the_logged_model_loads_through_mlflow_without_pickle_and_samples(heads, monkeypatch):
    client, *_ = heads
    _, _, children = parent_and_children(client)
    run = next(r for r in children if r.data.tags["variant"] == "h4")
    module, meta = model_flavor.load(f"runs:/{run.info.run_id}/model", client.tracking_uri)
    assert len(meta["chars"]) == 65 and meta["block_size"] == 64
    text = model_flavor.generate(module, meta, "JULIET:\n", 40, temperature=0.8, seed=1)
    assert text.startswith("JULIET:\n") and len(text) == len("JULIET:\n") + 40
    assert set(text) <= set(meta["chars"])
    assert model_flavor.generate(module, meta, "JULIET:\n", 40, temperature=0.8, seed=1) == text  # seeded


def test_make_ui_prints_each_exercises_runs_link(heads, monkeypatch, capsys):
    _, srv, _ = heads
    monkeypatch.setattr("os.execv", lambda *a: None)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{srv.store / 'mlflow.db'}")   # this store, whatever ran before
    port = free_port()
    assert ui.main([f"port={port}"]) == 0
    out = capsys.readouterr().out
    exp = MlflowClient(f"sqlite:///{srv.store / 'mlflow.db'}").get_experiment_by_name("quick/heads")
    table = (f"http://127.0.0.1:{port}/#/experiments/{exp.experiment_id}/runs?workflowType=machine_learning"
             f"&compareRunsMode=TABLE&viewStateShareKey={views.TABLE_KEY}")
    assert re.search(rf"^[ \t]+quick/heads +{re.escape(table)}$", out, re.M), out   # the names in a column
    assert f"compareRunsMode=CHART&viewStateShareKey={views.KEY}" in out
    assert "GenAI" not in out


def test_the_assistant_check_sees_the_panel_where_mlflows_own_first_visit_opens_it(heads):
    """The assistant check (browser.no_genai_and_no_assistant, on every exercise's views) can fail: with the
    browser holding MLflow's own first-visit value, the panel opens."""
    _, srv, _ = heads
    seen = browser.look(srv.url, "text=quick/heads", storage={"mlflow.assistant.fab.autoOpenedOnFirstLoad_v1": "false"})
    assert seen.assistant


def test_the_documented_load_model_command_gives_a_graph_of_the_gpt(heads):
    """docs/exercises.md's command, as a user types it: MLflow's own loader, with its pickle check on."""
    import os
    import subprocess
    import sys

    client, *_ = heads
    _, _, children = parent_and_children(client)
    run_id = children[0].info.run_id
    env = {**os.environ, "MLFLOW_TRACKING_URI": client.tracking_uri, "MLFLOW_ALLOW_PICKLE_DESERIALIZATION": "false"}
    code = f"import mlflow; m = mlflow.pytorch.load_model('runs:/{run_id}/model'); print(m)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "GraphModule" in out.stdout and "lm_head" in out.stdout
