"""A real `mlflow server`, started as `make ui` starts it: the suite and the report against it over HTTP, with every
run, metric, artifact and model on the server; then MLflow's own UI in headless Chromium, listing them."""
import contextlib
import io
import json
import urllib.parse

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from lm.commands import suite
from lm.model import checkpoint
from lm.model.model import GPTConfig
from tests.scaleout.helpers import ARTIFACTS, Server, browse, free_port

ARGS = ["quick=true", "ablations=[baseline,temperature]"]   # temperature reads baseline's model back from the server
RUNS = {"quick/baseline": {"base/seed1"}, "quick/temperature": {"t05/seed1", "t10/seed1", "t15/seed1"}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("server")
    srv = Server(tmp / "server-store", tmp / "server.log")
    try:
        srv.wait()
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def remote(server, tmp_path_factory):
    """The quick suite with MLFLOW_TRACKING_URI pointing at the server, as a user on another machine runs it."""
    tmp = tmp_path_factory.mktemp("client")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_TRACKING_URI", server.url)
        mp.setenv("TINYGPT_STORE", str(tmp / "local-store"))   # must stay empty: nothing is kept locally
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = suite.main([*ARGS, f"tracking.checkpoint_dir={tmp / 'checkpoints'}"])
        assert code == 0, out.getvalue()[-3000:]
        yield MlflowClient(server.url), tmp, mp, out.getvalue()


def runs_of(client, name):
    exp = client.get_experiment_by_name(name)
    runs = client.search_runs([exp.experiment_id])
    return exp, [r for r in runs if r.data.tags.get("role") == "exercise"], \
        [r for r in runs if r.data.tags.get("role") != "exercise"]


def test_the_suite_logs_runs_metrics_and_artifacts_to_the_server(server, remote):
    client, tmp, _, out = remote
    assert f"({server.url})" in out and "4 to run" in out
    for name, names in RUNS.items():
        exp, parents, children = runs_of(client, name)
        assert exp.artifact_location.startswith("mlflow-artifacts:"), exp.artifact_location  # uploaded through it
        assert len(parents) == 1 and parents[0].info.status == "FINISHED"
        assert {r.info.run_name for r in children} == names
        for r in children:
            assert r.info.status == "FINISHED", r.data.tags.get("failure_reason")
            assert r.data.tags["mlflow.parentRunId"] == parents[0].info.run_id
            assert {"mask", "pos_emb", "n_head", "n_layer", "n_embd", "block_size"} <= set(r.data.params)
            assert {"val_loss", "val_perplexity", "heads_prev_token_max"} <= set(r.data.metrics)
            files = {a.path for a in client.list_artifacts(r.info.run_id)}
            assert {"model.pt", "samples.txt", "heads.csv"} <= files
    # The files are the server's, in its artifact store; none stayed on the client.
    assert list((server.store / "artifacts").rglob("model.pt"))
    assert not (tmp / "local-store" / "mlflow.db").exists()
    assert not list((tmp / "checkpoints").rglob("*.ckpt"))     # resumable checkpoints go once a run finishes


def test_the_model_downloads_from_the_server_and_loads(server, remote, tmp_path):
    client, *_ = remote
    _, _, (base,) = runs_of(client, "quick/baseline")
    path = mlflow.artifacts.download_artifacts(run_id=base.info.run_id, artifact_path="model.pt",
                                               dst_path=str(tmp_path), tracking_uri=server.url)
    model, meta = checkpoint.load(path, expect=GPTConfig())
    assert len(meta["chars"]) == 65


def test_a_second_suite_against_the_server_trains_nothing(remote):
    client, tmp, mp, _ = remote
    before = {r.info.run_id for name in RUNS for r in runs_of(client, name)[2]}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert suite.main(ARGS) == 0
    assert "4 already done, 0 to run" in out.getvalue()
    assert {r.info.run_id for name in RUNS for r in runs_of(client, name)[2]} == before


def test_the_report_reads_the_server_and_logs_itself_there(server, remote):
    report = pytest.importorskip("analysis.report")
    client, tmp, *_ = remote
    out = tmp / "reports"
    with contextlib.redirect_stdout(io.StringIO()):
        assert report.main([*ARGS, f"out={out}"]) == 0
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    exp = client.get_experiment_by_name("quick/report")
    (run,) = client.search_runs([exp.experiment_id], max_results=1)
    assert {"report.html", "report.md"} <= {a.path for a in client.list_artifacts(run.info.run_id)}


def test_the_ui_lists_the_exercises_and_their_runs(server, remote):
    client, *_ = remote
    ARTIFACTS.mkdir(exist_ok=True)
    dom = browse(f"{server.url}/#/experiments?workflowType=machine_learning", dom=True)
    for name in RUNS:
        assert name in dom, f"{name} is not on the experiments page"
    browse(f"{server.url}/#/experiments?workflowType=machine_learning", screenshot=ARTIFACTS / "ui-experiments.png")
    # The runs of an exercise, side by side: MLflow's compare page for its child runs.
    exp, _, children = runs_of(client, "quick/temperature")
    ids = urllib.parse.quote(json.dumps([r.info.run_id for r in children]))
    url = f"{server.url}/#/compare-runs?runs={ids}&experiments={urllib.parse.quote(json.dumps([exp.experiment_id]))}" \
          "&workflowType=machine_learning"
    dom = browse(url, dom=True)
    assert f"Comparing {len(children)} Runs" in dom
    for name in RUNS["quick/temperature"]:
        assert name in dom, f"{name} is not on the compare page"
    browse(url, screenshot=ARTIFACTS / "ui-compare-temperature.png")
    assert (ARTIFACTS / "ui-experiments.png").stat().st_size > 10_000


def test_make_ui_on_a_port_in_use_says_so_in_one_line(server, capsys, monkeypatch):
    from lm.commands import ui

    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    monkeypatch.setenv("TINYGPT_STORE", str(server.store))   # the same store, a second time
    monkeypatch.setattr("os.execv", lambda *a: pytest.fail("a second server was started"))
    assert ui.main([f"port={server.port}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"port {server.port} on 127.0.0.1 is already in use" in err
    assert "an MLflow server is already answering there" in err and f"PORT={server.port + 1}" in err


def test_an_unreachable_server_is_one_line_and_touches_nothing(tmp_path, monkeypatch, capsys):
    port = free_port()   # nothing listens on it
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    assert suite.main(ARGS) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"error: cannot reach the MLflow server at http://127.0.0.1:{port} (")
    assert "Connection refused" in err and err.endswith("unset MLFLOW_TRACKING_URI to use the local store")
    assert not (tmp_path / "store").exists()


def test_a_server_that_refuses_this_client_is_one_line(server, monkeypatch):
    """MLflow 3 answers /health to anyone, but its API only to the host names in --allowed-hosts."""
    import urllib.request

    from lm.tracking.store import Store, TrackingError

    plain = urllib.request.Request

    class ByAnotherName(plain):   # as a client elsewhere would reach a server started with --host 0.0.0.0
        def __init__(self, url, headers=None, **kw):
            super().__init__(url, headers={**(headers or {}), "Host": "mlflow.example.org"}, **kw)

    monkeypatch.setattr(urllib.request, "Request", ByAnotherName)
    with pytest.raises(TrackingError) as e:
        Store(server.url)
    assert str(e.value) == (f"{server.url} answered HTTP 403 (Invalid Host header - possible DNS rebinding attack "
                            f"detected) to an API call: it refuses the host name this client uses; start the server "
                            f"with --allowed-hosts 127.0.0.1:{server.port}")


def test_a_server_that_wants_a_login_is_one_line(monkeypatch):
    import http.server
    import threading

    from lm.tracking.store import Store, TrackingError

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path == "/health"
            self.send_response(200 if ok else 401)
            self.end_headers()
            self.wfile.write(b"OK" if ok else b"You are not authenticated.")

        def log_message(self, *a):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.delenv("MLFLOW_TRACKING_USERNAME", raising=False)
        with pytest.raises(TrackingError, match="wants a login: set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD"):
            Store(f"http://127.0.0.1:{httpd.server_port}")
        monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", "me")
        with pytest.raises(TrackingError, match="refused the login in MLFLOW_TRACKING_USERNAME"):
            Store(f"http://127.0.0.1:{httpd.server_port}")
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_server_holds_the_datasets_the_parent_summaries_and_the_mlflow_model(server, remote):
    from lm.measures import model_flavor
    from lm.tracking import aggregates

    client, *_ = remote
    _, (parent,), (base,) = runs_of(client, "quick/baseline")
    assert {d.dataset.name for d in base.inputs.dataset_inputs} == {"shakespeare/train", "shakespeare/validation"}
    assert parent.data.tags["base/val_loss"] == f"{aggregates.number(base.data.metrics['val_loss'])} (1 seed)"
    module, meta = model_flavor.load(f"runs:/{base.info.run_id}/model", server.url)   # downloaded from the server
    assert model_flavor.generate(module, meta, "ROMEO:", 30).startswith("ROMEO:")


def test_make_ui_against_the_server_prints_links_that_open_on_each_exercises_own_comparison(server, remote,
                                                                                          monkeypatch, capsys):
    """The same look as tests/scaleout/test_ui_runs.py's, at the links `make ui` prints for a remote server: the
    temperature exercise's charts are its word validity."""
    from lm.commands import ui
    from tests.scaleout import browser

    monkeypatch.setenv("MLFLOW_TRACKING_URI", server.url)
    monkeypatch.setattr("os.execv", lambda *a: pytest.fail("no local server for a remote store"))
    assert ui.main([]) == 0
    out = capsys.readouterr().out
    seen = browser.check_printed_links(out, list(RUNS))
    assert seen["quick/temperature"][1].charts[:2] == ["word_validity", "word_validity_stripped"]
    assert "t05/word_validity" in seen["quick/temperature"][0].text
    browser.check_home(server.url, list(RUNS))
