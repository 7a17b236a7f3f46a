"""The launchers: a registry of classes that keep the Launcher protocol, each chosen by its config's `name:`. A launcher
of one's own is a registered class and a config; one that cannot launch, or a name no launcher has, is one line
before any work."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from mlflow.tracking import MlflowClient

from lm.settings.errors import ConfigError
from lm.suite import ExitStatus, LauncherConfig, State, SuiteSpec, launchers, run
from lm.suite.launchers.local import LocalPool
from lm.suite.launchers.submitit import SubmititLauncher

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf" / "launcher"


def test_every_launcher_config_names_a_registered_launcher_and_every_launcher_has_one():
    names = {yaml.safe_load(f.read_text())["name"] for f in CONF.glob("*.yaml")}
    assert names == {"local", "submitit"}
    assert {name: launchers.find(name) for name in names} == {"local": LocalPool, "submitit": SubmititLauncher}
    assert set(launchers.LAUNCHERS) == names


def test_a_name_no_launcher_has_is_one_line_naming_the_known_ones():
    with pytest.raises(ConfigError) as e:
        launchers.find("ray")
    assert str(e.value) == "launcher.name='ray' must be local or submitit (the launchers of lm/suite/launchers/)"


class _Done:
    def __init__(self, result: dict):
        self._result = result

    def done(self) -> bool:
        return True

    def result(self) -> dict:
        return self._result


class InProcess:
    """The least a launcher is: each run in the suite's own process, one at a time."""
    capacity, threads = 1, 1
    started: list = []
    warmed: list = []   # whether the store's file was there at each call of warm
    store = Path("mlflow.db")   # the store the test runs the suite on

    @classmethod
    def warm(cls) -> None:
        cls.warmed.append(cls.store.exists())

    @classmethod
    def check(cls, cfg: LauncherConfig) -> None:
        if cfg.parameters.get("refuse"):
            raise ConfigError("launcher=in_process: refused, as asked")

    @classmethod
    def start(cls, launch: launchers.Launch) -> "InProcess":
        cls.started.append(launch)
        return cls()

    def submit(self, fn, *args) -> _Done:
        return _Done(fn(*args))

    def describe(self) -> str:
        return "the suite's own process"

    def interrupt(self) -> None:
        pass

    def shutdown(self, cancel: bool = False) -> None:
        pass


@pytest.fixture
def in_process(monkeypatch):
    monkeypatch.setitem(launchers.LAUNCHERS, "in_process", InProcess)
    monkeypatch.setattr(InProcess, "started", [])
    monkeypatch.setattr(InProcess, "warmed", [])
    return InProcess


def test_a_launcher_of_ones_own_runs_the_suite_once_registered(in_process, tmp_path, capsys, monkeypatch):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    monkeypatch.setattr(InProcess, "store", tmp_path / "mlflow.db")
    spec = SuiteSpec(ablations=["heads"], variants=["heads/h1", "heads/h2"], quick=True, tracking_uri=uri,
                     launcher=LauncherConfig(name="in_process"))
    result = run(spec)
    assert "launching on the suite's own process" in capsys.readouterr().out
    assert result.status == ExitStatus.OK and [r.state for r in result.runs] == [State.DONE, State.DONE]
    (launch,) = in_process.started
    assert (launch.runs, launch.config.name) == (2, "in_process")
    client = MlflowClient(uri)
    assert {client.get_run(r.run_id).info.status for r in result.runs} == {"FINISHED"}
    # A new store: every run to do, so the launcher warmed up before the store was opened. On the store it made,
    # where the runs may all be finished, it does not (the local launcher's warming is its workers' imports).
    assert in_process.warmed == [False]
    assert run(spec).status == ExitStatus.OK and in_process.warmed == [False]


def test_a_launcher_that_refuses_is_its_line_before_any_work(in_process, tmp_path):
    spec = SuiteSpec(ablations=["heads"], quick=True, tracking_uri=f"sqlite:///{tmp_path}/mlflow.db",
                     launcher=LauncherConfig(name="in_process", parameters={"refuse": True}))
    with pytest.raises(ConfigError, match="launcher=in_process: refused, as asked"):
        run(spec)
    assert not in_process.started and not list(tmp_path.iterdir())


def test_a_suites_own_process_trains_nothing_so_never_imports_lightning(tmp_path):
    # Lightning's imports are 4 s of a core; only the workers, forked from their fork server, train with it
    code = ("import sys; from lm.commands import suite; "
            "status = suite.main(['quick=true', 'ablations=[nopos]', 'workers=2']); "
            "print(status, 'pytorch_lightning' in sys.modules, 'torch' in sys.modules)")
    env = {**os.environ, "TINYGPT_STORE": str(tmp_path / "store")}
    env.pop("MLFLOW_TRACKING_URI", None)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.stdout.splitlines()[-1] == "0 False True", p.stdout[-2000:] + p.stderr[-2000:]
    assert "2 of 2 runs done" in p.stdout   # both trained, by the workers
