"""MLflow's UI as the comparison surface (issue 14), on a real quick store of the heads exercise: `make ui`'s links
open on the runs table in a fresh headless Chromium, the parent run carries each variant's mean, the runs carry
their corpus as datasets and their model in MLflow's PyTorch flavor, and the seeds view is grouped by variant."""
import contextlib
import io

import pytest
from mlflow.tracking import MlflowClient

from lm.commands import suite, ui
from lm.measures import model_flavor
from lm.tracking import views
from tests.scaleout.helpers import ARTIFACTS, Server, browse, free_port

VARIANTS = ["h1", "h2", "h4", "h8"]


@pytest.fixture(scope="module")
def heads(tmp_path_factory):
    """`make ablations-quick ABLATIONS=heads` into a store of its own, then `make ui` over it."""
    store = tmp_path_factory.mktemp("ui") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        mp.setenv("TINYGPT_STORE", str(store))
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert suite.main(["quick=true", "ablations=[heads]"]) == 0, out.getvalue()[-3000:]
        srv = Server(store, store.parent / "server.log")
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


def test_the_parent_run_carries_each_variants_mean_and_seed_count(heads):
    client, *_ = heads
    _, parent, children = parent_and_children(client)
    by_variant = {r.data.tags["variant"]: r.data.metrics["val_loss"] for r in children}
    for v in VARIANTS:
        assert parent.data.metrics[f"{v}/val_loss_mean"] == pytest.approx(by_variant[v])
        assert parent.data.metrics[f"{v}/seeds"] == 1
        assert f"{v}/val_loss_std" not in parent.data.metrics   # one seed has no spread


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
    assert f"quick/heads  http://127.0.0.1:{port}/#/experiments/{exp.experiment_id}/runs?workflowType=" \
           f"machine_learning&viewStateShareKey={views.TABLE_KEY}" in out
    assert f"compareRunsMode=CHART&viewStateShareKey={views.KEY}" in out
    assert "GenAI" not in out


def test_the_printed_link_opens_on_the_runs_table_with_the_parents_means(heads):
    client, srv, _ = heads
    ((_, runs, _),) = ui.exercise_links(client.tracking_uri, srv.url)
    dom = browse(runs, dom=True, budget_ms=15000)   # a fresh profile: the UI's switch is on GenAI
    assert "Runs and means" in dom and ">heads<" in dom
    for v in VARIANTS[:3]:   # the table draws only the columns in the window
        assert f"{v}/val_loss_mean" in dom
    assert "shakespeare/train" in dom              # the parent's Dataset column
    assert "ag-root" in dom and "Detect Issues" not in dom    # the runs table, not the GenAI overview
    ARTIFACTS.mkdir(exist_ok=True)   # the README's docs/ui-runs-heads.png is this picture
    browse(runs, screenshot=ARTIFACTS / "ui-runs-heads.png", budget_ms=15000)
    assert (ARTIFACTS / "ui-runs-heads.png").stat().st_size > 10_000


def test_the_seeds_view_groups_the_runs_by_variant(heads):
    client, srv, _ = heads
    ((_, _, charts),) = ui.exercise_links(client.tracking_uri, srv.url)
    dom = browse(charts, dom=True, budget_ms=15000)
    assert "Group by: variant" in dom and views.NAME in dom
    for v in VARIANTS:
        assert f"Group: {v}" in dom


def test_the_readmes_load_model_command_gives_a_graph_of_the_gpt(heads):
    """The README's command, as a user types it: MLflow's own loader, with its pickle check on."""
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
