import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Tests read the real corpora from the shared folder beside the checkout, as CI does.
os.environ.setdefault("TINYGPT_DATA_DIR", str((ROOT.parent / "shared" / "data").resolve()))
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
DATA = Path(os.environ["TINYGPT_DATA_DIR"])
# The lessons, the project's specification, beside the corpora in the shared folder (../shared/seeds in CI).
SEEDS = DATA.parent / "seeds"


def pytest_configure(config):
    if not (DATA / "tinyshakespeare.txt").is_file():
        pytest.exit(f"the corpora are not in {DATA}; set TINYGPT_DATA_DIR to the folder holding tinyshakespeare.txt",
                    returncode=2)


# The folders whose tests share one thing outside the test session, and so must run one after another in one process:
# the team server (each test moves the experiment away first), the SLURM node (2 CPUs), the reliability figures file.
ONE_PROCESS = {"server", "slurm", "reliability"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The units `make test`'s workers take (pytest-xdist's `--dist loadgroup`): a test file, so that each module's
    fixtures are made once, or a whole folder of ONE_PROCESS. Before xdist reads the groups (tryfirst)."""
    tests = ROOT / "tests"
    for item in items:
        folder, *_ = item.path.relative_to(tests).parts
        group = folder if folder in ONE_PROCESS else item.path.relative_to(tests).as_posix()
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="module", autouse=True)
def one_browser_a_module():
    """The browser tests' Chromium lives as long as the module that started it (tests/scaleout/helpers.py)."""
    yield
    from tests.scaleout.helpers import stop_shared_browser

    stop_shared_browser()


# `make` as a user runs it: the venv's build step taken as done, the test's python as PY.
MAKE = ["make", "-s", "-o", ".venv/.installed", f"PY={sys.executable}"]


def user_env(env: dict | None = None, echo: bool = False) -> dict:
    """A user's environment for `make`: not the outer make's (`make test ARGS=...` passes ARGS down to every make
    below it through MAKEFLAGS, and its variables as TINYGPT_MAKE_*); with echo, lm.commands.makeargs prints the argv as
    JSON instead of starting the program."""
    from lm.commands.makeargs import VARIABLES

    e = {k: v for k, v in os.environ.items() if k not in VARIABLES and not k.startswith("TINYGPT_MAKE")
         and k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return {**e, **(env or {}), **({"TINYGPT_MAKEARGS_ECHO": "1"} if echo else {})}


@pytest.fixture
def store(tmp_path, monkeypatch):
    """An empty MLflow store of its own for each test."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "mlruns"))
    return tmp_path / "mlruns"


# One store made by the quick suite, shared by every test of the session that reads one (the suite takes ~40 s).
@pytest.fixture(scope="session")
def quick_store(tmp_path_factory):
    """The folder of a store holding every exercise of the quick suite (`quick/<exercise>`), one seed each."""
    from lm.commands import suite

    root = tmp_path_factory.mktemp("quick-store")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        mp.setenv("TINYGPT_STORE", str(root))
        assert suite.main(["quick=true"]) == 0
    return root
