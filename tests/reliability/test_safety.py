"""Safety: a checkpoint is data, never code; nothing runs a shell; artifacts stay under the store's artifact root,
whatever the names; the UI listens on this machine only unless told otherwise."""
import ast
import re
import socket
from pathlib import Path

import pytest
import torch
from mlflow.tracking import MlflowClient

from lm.commands import train
from lm.model import checkpoint
from lm.settings import config
from lm.tracking.store import Store
from tests.reliability import harness


class Payload:
    """Pickled, it is a call: open(marker, "w"). Loading it unsafely creates the marker file."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


@pytest.fixture
def local(fresh, monkeypatch):
    monkeypatch.setenv("TINYGPT_STORE", str(fresh))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return fresh


def test_a_checkpoint_carrying_code_is_refused_and_its_code_never_runs(tmp_path):
    marker, path = tmp_path / "ran", tmp_path / "model.pt"
    torch.save({"format": checkpoint.FORMAT, "model": {}, "chars": [], "bos": -1, "state_dict": Payload(marker)}, path)
    torch.load(path, weights_only=False)  # the payload is live: unsafe loading runs it
    assert marker.exists()
    marker.unlink()
    with pytest.raises(checkpoint.CheckpointError, match="not a readable checkpoint"):
        checkpoint.load(path)
    assert not marker.exists()


def test_resuming_from_a_checkpoint_carrying_code_never_runs_it(local, tmp_path):
    """Lightning's resume reads last.ckpt with weights_only=True as well: the run fails, the code does not run."""
    marker = tmp_path / "ran"
    cfg = config.load(harness.TINY)
    store = Store()
    run_id = store.create_run("tiny", "seed0", {"config_hash": cfg.config_hash, "seed": 0})
    store.end_run(run_id, "KILLED", "interrupted")
    (store.checkpoint_dir / run_id).mkdir(parents=True)
    torch.save({"state_dict": Payload(marker), "global_step": 10}, store.checkpoint_dir / run_id / "last.ckpt")
    with pytest.raises(Exception, match="(?i)weights_only|unpickl|global"):
        train.main([*harness.TINY, "--resume", run_id])
    assert not marker.exists()
    assert store.client.get_run(run_id).info.status == "FAILED"


UNSAFE = {("os", "system"), ("os", "popen"), ("subprocess", "getoutput"), ("subprocess", "getstatusoutput"),
          ("pty", "spawn"), ("commands", "getoutput")}


def shell_calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = (f.value.id, f.attr) if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
        if name in UNSAFE:
            found.append(f"{path.name}:{node.lineno} {'.'.join(name)}")
        if isinstance(f, ast.Name) and f.id in ("eval", "exec"):
            found.append(f"{path.name}:{node.lineno} {f.id}")
        for kw in node.keywords:
            if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                found.append(f"{path.name}:{node.lineno} shell={ast.unparse(kw.value)}")
    return found


def test_nothing_runs_a_shell_or_evaluates_a_string():
    files = [p for d in ("lm", "analysis") for p in (harness.ROOT / d).rglob("*.py")]
    assert len(files) > 10
    found = [c for p in files for c in shell_calls(p)]
    harness.record("safety", files_scanned_for_shells=len(files), shell_calls=len(found))
    assert not found, found


def test_the_scan_would_see_one(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os, subprocess\nos.system('ls ' + x)\nsubprocess.run(cmd, shell=True)\neval(s)\n")
    assert len(shell_calls(bad)) == 3


def test_artifacts_stay_under_the_artifact_root_whatever_the_names(local):
    names = ["tracking.experiment=..", "tracking.run_name=../../../etc/passwd"]
    assert train.main([*harness.TINY, "train.steps=10", *names]) == 0
    store = local
    root = (store / "artifacts").resolve()
    client = MlflowClient(harness.uri(store))
    (run,) = client.search_runs([client.get_experiment_by_name("..").experiment_id])
    assert Path(run.info.artifact_uri.removeprefix("file://")).resolve().is_relative_to(root)
    written = [p.resolve() for p in store.parent.rglob("*") if p.is_file()]
    outside = [p for p in written if not p.is_relative_to(root) and p.parent.resolve() != store.resolve()]
    assert {p.name for p in written if p.is_relative_to(root)} >= {"model.pt", "samples.txt", "heads.csv"}
    harness.record("safety", artifact_files_outside_the_root=len(outside))
    assert not outside, outside


@pytest.mark.parametrize("name", ["..", ".", "../../etc", "a/../../b", "/etc", "quick/baseline", "x y%z#"])
def test_an_experiment_folder_is_always_inside_the_artifact_root(local, name):
    store = Store()
    exp = store.client.get_experiment(store.experiment_id(name))
    where = Path(exp.artifact_location.removeprefix("file://")).resolve()
    assert where.is_relative_to((local / "artifacts").resolve()) and where != (local / "artifacts").resolve()


def test_the_ui_listens_on_this_machine_only_by_default(local, monkeypatch):
    from lm.commands import ui

    makefile = (harness.ROOT / "Makefile").read_text()
    assert re.search(r"^HOST \?= 127\.0\.0\.1$", makefile, re.M)
    started = []
    monkeypatch.setattr(ui.os, "execv", lambda path, cmd: started.append(cmd))
    monkeypatch.setattr(ui.os, "execvp", lambda path, cmd: started.append(cmd))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ui.main([f"port={port}"])
    (cmd,) = started
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    harness.record("safety", ui_default_host=cmd[cmd.index("--host") + 1])
