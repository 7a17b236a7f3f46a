"""`make ui` without starting a server: what it would run, where it binds, and its one-line refusals."""
import json
import os
import socket
import subprocess
import sys

import pytest

from lm.commands import ui
from tests.scaleout.helpers import ROOT, free_port


@pytest.fixture
def started(monkeypatch):
    """os.execv recorded instead of done: the command `make ui` would become."""
    calls = []
    monkeypatch.setattr(os, "execv", lambda path, argv: calls.append(argv))
    monkeypatch.setenv("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "")   # so that what ui.main sets is undone after
    monkeypatch.delenv("MLFLOW_SERVER_ENABLE_JOB_EXECUTION")
    return calls


def test_it_binds_loopback_and_serves_the_artifacts(started, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "store"))
    port = free_port()
    assert ui.main([f"port={port}"]) == 0
    (cmd,) = started
    assert cmd[1:5] == ["-m", "mlflow", "server", "--backend-store-uri"]
    assert cmd[5] == f"sqlite:///{tmp_path}/store/mlflow.db"
    assert cmd[cmd.index("--app-name") + 1] == "tinygpt"   # its page opens on the runs (lm/commands/ui_app.py)
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1" and cmd[cmd.index("--port") + 1] == str(port)
    assert cmd[cmd.index("--artifacts-destination") + 1] == str(tmp_path / "store" / "artifacts")
    assert "--serve-artifacts" in cmd and os.environ["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] == "false"
    out, err = capsys.readouterr()
    assert f"open http://127.0.0.1:{port}" in out and "warning" not in err


def test_other_mlflow_options_pass_through_as_the_server_list(started, tmp_path, monkeypatch):
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert ui.main([f"port={free_port()}", "server=[--workers,3,--allowed-hosts,'a.internal,a.internal:5000']"]) == 0
    assert started[0][-4:] == ["--workers", "3", "--allowed-hosts", "a.internal,a.internal:5000"]
    assert started[0].count("--workers") == 1


def test_serving_beyond_this_machine_warns(started, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    port = free_port()
    assert ui.main(["host=0.0.0.0", f"port={port}"]) == 0
    assert started[0][started[0].index("--host") + 1] == "0.0.0.0"
    err = capsys.readouterr().err
    assert "warning: serving on 0.0.0.0, beyond this machine" in err and "no login" in err


def test_a_port_in_use_is_one_line(started, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert ui.main([f"port={port}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: port {port} on 127.0.0.1 is already in use: something else is using it; "
                   f"choose another: make ui PORT={port + 1}")
    assert not started and not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize("args,env,message", [
    (["port=70000"], {}, "port=70000 is not a port (1-65535): make ui PORT=5001"),
    (["port=http"], {}, "port='http' is not a whole number"),
    (["host=no-such-host.invalid"], {}, "cannot serve on 'no-such-host.invalid'"),
    (["--port", "5001"], {}, "unknown option '--port': options are key=value: port=5001"),
    (["--workers", "4"], {}, "server=[...] passes options on: server=[--workers,4]"),
    ([], {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}, "is the MLflow server http://127.0.0.1:9, which serves"),
])
def test_bad_input_is_one_line(args, env, message, started, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert ui.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and message in err and "\n" not in err and not started


def test_make_ui_passes_host_and_port():
    """What lm/commands/makeargs.py would start lm.commands.ui with (TINYGPT_MAKEARGS_ECHO=1 prints it instead)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}  # a user's make
    env["TINYGPT_MAKEARGS_ECHO"] = "1"
    out = subprocess.run(["make", "-s", "-o", ".venv/.installed", f"PY={sys.executable}", "ui", "PORT=5123"],
                         cwd=ROOT, env=env, capture_output=True, text=True).stdout
    assert json.loads(out) == ["host=127.0.0.1", "port=5123"]
