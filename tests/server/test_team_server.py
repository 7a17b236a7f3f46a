"""A team's tracking server, for real: `mlflow server` on PostgreSQL with MLflow's basic-auth app and an artifact
store (tests/server/pgserver.sh). The quick suite and the report against it with a login from the environment; a
wrong password refused in one line before anything heavy loads; the server stopped for 20 s in the middle of a run
and started again; and no password shown or stored anywhere: terminal, params, tags, artifacts, SLURM's job logs.

    tests/server/pgserver.sh start && python -m pytest -q tests/server
"""
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from mlflow.server import get_app_client
from mlflow.tracking import MlflowClient

from lm.tracking.store_check import redact
from tests.reliability import harness
from tests.slurm.test_slurm import wait_until

ROOT = harness.ROOT
ONE = ["quick=true", "ablations=[baseline]"]   # the quick suite's smallest exercise: one run of 20 steps
RESTART_STEPS = 200                              # long enough that the server goes down while it trains
DOWN_S = 20


def command(args: list[str], env: dict[str, str], cwd: Path = ROOT, timeout: float = 300) -> harness.Outcome:
    t0 = time.time()
    p = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return harness.Outcome(p.returncode, p.stdout, p.stderr, seconds=time.time() - t0)


def logged_in(server, store: Path, uri: str | None = None, password: str | None = None) -> dict[str, str]:
    """A user's environment: the server (or uri), the test user's login in MLFLOW_TRACKING_USERNAME/PASSWORD, and a
    local store of its own that must stay empty."""
    return harness.env(store, MLFLOW_TRACKING_URI=uri or server.url, MLFLOW_TRACKING_USERNAME=server.user,
                       MLFLOW_TRACKING_PASSWORD=password or server.password)


@pytest.fixture
def client(team_server, monkeypatch) -> MlflowClient:
    """MLflow's client on the server, as the test user (the login from the environment, as MLflow reads it)."""
    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", team_server.user)
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", team_server.password)
    return MlflowClient(team_server.url)


def fresh(team_server, name: str) -> None:
    """The experiment's name freed for this test: one of an earlier test (made through the server by the test user,
    or straight in the database by the SLURM test) is renamed away and deleted, by the admin, who may change any."""
    with admin(team_server):
        client = MlflowClient(team_server.url)
        exp = client.get_experiment_by_name(name)
        if exp is not None:
            client.rename_experiment(exp.experiment_id, f"{name}-before-{uuid.uuid4().hex[:8]}")
            client.delete_experiment(exp.experiment_id)


@contextlib.contextmanager
def admin(team_server):
    """MLflow's client logged in as the server's admin, for the block."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_TRACKING_USERNAME", team_server.admin)
        mp.setenv("MLFLOW_TRACKING_PASSWORD", team_server.admin_password)
        yield


def runs(client: MlflowClient, name: str) -> list:
    exp = client.get_experiment_by_name(name)
    return client.search_runs([exp.experiment_id]) if exp else []


def scan(client: MlflowClient, experiments: list[str], secrets: list[str], texts: dict[str, str]) -> dict:
    """Where any of the secrets shows: in the texts (a command's terminal output, a job's log) and in the store, the
    experiments' every run's params, tags and artifact files. What was read, and every place a secret was found."""
    found = [where for where, text in texts.items() if any(s in text for s in secrets)]
    counts = {"params": 0, "tags": 0, "artifact_files": 0, "texts": len(texts)}
    with tempfile.TemporaryDirectory() as tmp:
        for name in experiments:
            for r in runs(client, name):
                for kind, values in (("params", r.data.params), ("tags", r.data.tags)):
                    counts[kind] += len(values)
                    found += [f"{name} {r.info.run_name} {kind}.{k}" for k, v in values.items()
                              if any(s in v for s in secrets)]
                folder = Path(client.download_artifacts(r.info.run_id, "", f"{tmp}/{r.info.run_id}"))
                for f in (p for p in folder.rglob("*") if p.is_file()):
                    counts["artifact_files"] += 1
                    data = f.read_bytes()
                    found += [f"{name} {r.info.run_name} artifact {f.relative_to(folder)}"
                              for s in secrets if s.encode() in data]
    return {"read": counts, "found": found}


def test_the_quick_suite_and_the_report_run_on_the_team_server_with_the_login_in_the_environment(
        team_server, client, tmp_path):
    fresh(team_server, "quick/baseline")
    env = logged_in(team_server, tmp_path / "local")
    suite = command(["-m", "lm.commands.suite", *ONE, f"tracking.checkpoint_dir={tmp_path / 'checkpoints'}"], env)
    assert suite.rc == 0, suite.err[-3000:]
    assert f"1 runs in 1 exercises ({team_server.url}): 0 already done, 1 to run" in suite.out
    report = command(["-m", "analysis.report", *ONE, f"out={tmp_path / 'reports'}"], env)
    assert report.rc == 0, report.err[-3000:]
    assert (tmp_path / "reports" / "report.html").is_file()

    exp = client.get_experiment_by_name("quick/baseline")
    assert exp.artifact_location.startswith("mlflow-artifacts:"), exp.artifact_location   # uploaded through it
    (parent,) = [r for r in runs(client, "quick/baseline") if r.data.tags.get("role") == "exercise"]
    (child,) = [r for r in runs(client, "quick/baseline") if r.data.tags.get("role") != "exercise"]
    assert parent.info.status == child.info.status == "FINISHED", child.data.tags.get("failure_reason")
    with admin(team_server):   # the admin asks the auth app whose experiment it is
        permission = get_app_client("basic-auth", team_server.url).get_user_permission(
            team_server.user, "experiment", exp.experiment_id)
    assert permission.permission == "MANAGE"   # the test user made the experiment, through its login
    assert {"val_loss", "val_perplexity"} <= set(child.data.metrics)
    assert {"model.pt", "samples.txt", "heads.csv"} <= {a.path for a in client.list_artifacts(child.info.run_id)}
    (logged,) = client.search_runs([client.get_experiment_by_name("quick/report").experiment_id],
                                   order_by=["attributes.start_time DESC"], max_results=1)
    assert {"report.html", "report.md"} <= {a.path for a in client.list_artifacts(logged.info.run_id)}
    assert not (tmp_path / "local" / "mlflow.db").exists()       # nothing was stored on the client
    seen = scan(client, ["quick/baseline"], team_server.secrets,
                {"the suite's output": suite.out + suite.err, "the report's output": report.out + report.err,
                 "report.html": (tmp_path / "reports" / "report.html").read_text(),
                 "report.md": (tmp_path / "reports" / "report.md").read_text()})
    harness.record("server", scan_login_in_the_environment={**seen["read"], "found": len(seen["found"])})
    assert not seen["found"], seen
    harness.record("server", quick_suite=f"{suite.seconds:.0f} s, report {report.seconds:.0f} s, on PostgreSQL "
                                         f"through the basic-auth login of user {team_server.user}")


HEAVY = ("torch", "mlflow", "pytorch_lightning", "pandas")


def refused(team_server, tmp_path, module: str, args: list[str], **login) -> tuple[harness.Outcome, set[str]]:
    """The command as a user starts it, under `python -X importtime`: its outcome (stderr without importtime's
    lines) and the heavy packages it had imported when it ended."""
    got = command(["-X", "importtime", "-m", module, *args], logged_in(team_server, tmp_path / "local", **login),
                  timeout=60)
    lines = got.err.splitlines()
    loaded = {ln.split("|")[-1].strip().split(".")[0] for ln in lines if ln.startswith("import time:")}
    got.err = "\n".join(ln for ln in lines if not ln.startswith("import time:"))
    return got, loaded & set(HEAVY)


def test_a_wrong_password_is_one_line_before_anything_heavy_loads_and_nothing_starts(team_server, client, tmp_path):
    wrong = "wrong-" + uuid.uuid4().hex[:12]
    before = {e.experiment_id for e in client.search_experiments()}
    cases = {  # the login from the environment, and the login in the URI
        "MLFLOW_TRACKING_PASSWORD": dict(password=wrong),
        "the URI": dict(uri=team_server.login_uri(wrong), password="unused"),
    }
    tried = []
    for source, login in cases.items():
        for module, args in (("lm.commands.suite", ONE), ("analysis.report", ONE)):
            got, loaded = refused(team_server, tmp_path, module, args, **login)
            err = got.err.strip()
            assert got.rc == 2 and "\n" not in err, (module, source, got.err[-2000:])
            assert err.startswith("error: ") and "answered HTTP 401" in err and "to an API call" in err, err
            if source == "the URI":
                assert f"http://{team_server.user}:***@" in err and f"it refused the login in the URI " \
                                                                  f"(user {team_server.user})" in err, err
            else:
                assert err.endswith(f"it refused the login in MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD "
                                    f"(user {team_server.user})"), err
            assert wrong not in got.out + got.err
            assert not loaded, f"{module} imported {sorted(loaded)} before refusing"
            tried.append(got.seconds)
    assert {e.experiment_id for e in client.search_experiments()} == before   # nothing was created
    assert not (tmp_path / "local").exists()
    harness.record("server", wrong_password=f"{len(tried)} of {len(tried)} refused in one line, before torch, "
                                            f"MLflow or pandas loaded ({max(tried):.1f} s at most; the suite and "
                                            f"the report; the password from the environment and in the URI)")


def test_the_server_stopped_for_20_s_in_the_middle_of_a_run_leaves_it_finished_with_every_point_once(
        team_server, client, tmp_path):
    experiment = f"server-restart-{uuid.uuid4().hex[:8]}"
    args = [*harness.TINY, f"train.steps={RESTART_STEPS}", f"tracking.experiment={experiment}",
            f"tracking.checkpoint_dir={tmp_path / 'checkpoints'}"]
    # The login in the URI this time: the run must never show it, through the outage either.
    env = harness.env(tmp_path / "local", MLFLOW_TRACKING_URI=team_server.login_uri())
    with open(tmp_path / "run.log", "w") as log:
        p = subprocess.Popen([sys.executable, "-m", "lm.commands.train", *args], cwd=ROOT, env=env, stdout=log,
                             stderr=subprocess.STDOUT, text=True)
        try:
            run = wait_until(lambda: _training(client, experiment), 180, "run logging train_loss on the server")
            team_server.script("stop", "mlflow")
            down = time.time()
            time.sleep(DOWN_S)
            assert p.poll() is None, "the run ended while the server was down"
            team_server.script("start")
            back = time.time()
            rc = p.wait(timeout=400)
        finally:
            if p.poll() is None:
                p.kill()
    out = (tmp_path / "run.log").read_text()
    run = client.get_run(run.info.run_id)
    histories = {k: [m.step for m in client.get_metric_history(run.info.run_id, k)] for k in run.data.metrics}
    twice = sum(len(steps) - len(set(steps)) for steps in histories.values())
    expected = {"train_loss": list(range(1, RESTART_STEPS + 1)),      # every step
                "val_loss": list(range(0, RESTART_STEPS + 1, 10))}     # before training, then every 10 steps
    missing = sum(len(set(steps) - set(histories.get(k, []))) for k, steps in expected.items())
    harness.record("server", restart=f"mlflow server down {back - down:.0f} s (stopped {DOWN_S} s, then its start) "
                                     f"in the middle of a {RESTART_STEPS}-step run: {run.info.status}, "
                                     f"{sum(map(len, histories.values()))} metric points, {missing} missing, "
                                     f"{twice} logged twice")
    assert rc == 0 and run.info.status == "FINISHED", out[-3000:]
    assert twice == 0, {k: steps for k, steps in histories.items() if len(steps) != len(set(steps))}
    assert {k: sorted(histories[k]) for k in expected} == expected
    assert f"{team_server.user}:***@" in out   # the summary's URI, as it is shown
    seen = scan(client, [experiment], team_server.secrets, {"the run's output": out})
    harness.record("server", scan_login_in_the_uri={**seen["read"], "found": len(seen["found"])})
    assert not seen["found"], seen


def _training(client: MlflowClient, experiment: str):
    """The experiment's run once it is training (the server has train_loss points), else None."""
    for r in runs(client, experiment):
        if r.info.status == "RUNNING" and "train_loss" in r.data.metrics:
            return r
    return None


def test_a_password_in_a_postgresql_uri_is_shown_as_stars_and_stored_nowhere(team_server, tmp_path):
    """One run straight into the server's database, the password in the URI given as tracking.uri (so that it would
    be a param): its output, params, tags and artifacts hold the URI only as postgresql+psycopg2://tinygpt:***@..."""
    experiment = f"secrets-{uuid.uuid4().hex[:8]}"
    run = command(["-m", "lm.commands.train", *harness.TINY, f"tracking.uri={team_server.db}",
                   f"tracking.experiment={experiment}", f"tracking.checkpoint_dir={tmp_path / 'checkpoints'}"],
                  harness.env(tmp_path / "local"), cwd=tmp_path)   # a database store keeps artifacts in ./mlruns
    assert run.rc == 0, run.err[-3000:]
    shown = redact(team_server.db)
    assert shown.startswith("postgresql+psycopg2://tinygpt:***@127.0.0.1:") and f"({shown})" in run.out
    client = MlflowClient(team_server.db)
    (r,) = runs(client, experiment)
    assert r.info.status == "FINISHED" and r.data.params["tracking.uri"] == shown
    seen = scan(client, [experiment], team_server.secrets, {"the run's output": run.out + run.err})
    harness.record("server", scan_postgresql_uri={**seen["read"], "found": len(seen["found"])})
    assert not seen["found"], seen
    assert seen["read"]["params"] > 30 and seen["read"]["artifact_files"] > 5


def test_a_password_in_the_uri_stays_out_of_slurms_job_logs(team_server, tmp_path):
    """The quick suite through sbatch, its store the database with its password in MLFLOW_TRACKING_URI: every job
    inherits the URI; its logs (submitit's stdout and stderr of each job) and the store must not hold the password."""
    from tests.slurm.conftest import why_not as no_slurm

    why = no_slurm()
    if why:
        if os.environ.get("TINYGPT_REQUIRE_SLURM") == "1":
            pytest.fail(f"{why}; TINYGPT_REQUIRE_SLURM=1 requires the SLURM tests")
        pytest.skip(f"SLURM's job logs not scanned: {why}")
    fresh(team_server, "quick/baseline")
    folder = tmp_path / "jobs"
    suite = command(["-m", "lm.commands.suite", *ONE, "launcher=slurm", f"launcher.folder={folder}",
                     f"tracking.checkpoint_dir={tmp_path / 'checkpoints'}"],
                    harness.env(tmp_path / "local", MLFLOW_TRACKING_URI=team_server.db), cwd=tmp_path, timeout=400)
    assert suite.rc == 0, suite.out[-2000:] + suite.err[-3000:]
    assert "launching on submitit (slurm)" in suite.out
    logs = {str(p.relative_to(folder)): p.read_text(errors="replace") for p in folder.rglob("*")
            if p.is_file() and p.suffix in (".out", ".err")}
    assert logs, f"no job logs in {folder}"
    seen = scan(MlflowClient(team_server.db), ["quick/baseline"], team_server.secrets,
                {"the suite's output": suite.out + suite.err, **logs})
    harness.record("server", scan_slurm={**seen["read"], "found": len(seen["found"])})
    assert not seen["found"], seen
