import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Tests read the real corpora from the shared folder beside the checkout, as CI does.
os.environ.setdefault("TINYGPT_DATA_DIR", str((ROOT.parent / "shared" / "data").resolve()))
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
# One OpenMP thread in each of make test's worker processes, for the torch work they do themselves (torch reads it
# as it loads, after this file): two workers of two threads each on two cores wait on each other at every kernel.
# The commands the tests start choose their own (lm/model/threads.py).
os.environ.setdefault("OMP_NUM_THREADS", "1")
DATA = Path(os.environ["TINYGPT_DATA_DIR"])
# The lessons, the project's specification, beside the corpora in the shared folder (../shared/seeds in CI).
SEEDS = DATA.parent / "seeds"


def pytest_configure(config):
    if not (DATA / "tinyshakespeare.txt").is_file():
        pytest.exit(f"the corpora are not in {DATA}; set TINYGPT_DATA_DIR to the folder holding tinyshakespeare.txt",
                    returncode=2)


# The tests that share one thing outside a test file, and so run one after another in one process: a folder (the team
# server, each test of which moves the experiment away first; the SLURM node of 2 CPUs) or the files that read one
# session fixture (the reliability stores: the kill loop and two suites at once; a run stopped by a Ctrl-C).
SHARED = {
    "server": "server",
    "slurm": "slurm",
    "reliability/test_kill.py": "reliability-stores",
    "reliability/test_determinism.py": "reliability-stores",
    "reliability/test_concurrency.py": "reliability-stores",
    "reliability/test_bad_input.py": "reliability-ctrl-c",
    "reliability/test_resume.py": "reliability-ctrl-c",
}
# The longest units, started first so that none is left to one worker at the end while the other has nothing to do
# (worker-seconds, setups included, clean-clone `.ci/run` of 220ebef with `--durations=0`, 2026-12-04);
# the rest follow in collection order.
FIRST = [
    "slurm",                           # 375: a time limit, the quick suite, a memory limit, scancel
    "scaleout/test_ui_exercises.py",   # 260: the session's quick store, every landing and printed link in Chromium
    "reliability-stores",              # 147: the kill loop, two suites at once
    "server",                          # 132: the server stopped for 20 s, the quick suite on it
    "speed/test_bench_study.py",       # 95: a small study against its plain loops
    "speed/test_make_bench.py",        # 89: the README's make bench, the report row on the quick store
    "scaleout/test_mlflow_server.py",  # 71
    "speed/test_bench_process.py",     # 70: a whole make train against the plain loop
    "suite/test_suite.py",             # 63
]


def unit(nodeid: str) -> str:
    """The unit a worker takes a test in, from its node id (its file's path from the root first): its file's SHARED
    group, else the file, so that each module's fixtures are made once."""
    path = nodeid.split("::")[0].removeprefix("tests/")
    return SHARED.get(path.split("/")[0]) or SHARED.get(path) or path


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """`make test`'s units in the order its workers are to take them, the FIRST ones at the front."""
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(unit(item.nodeid), len(FIRST)))   # stable: the rest keep order


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler by scope, a scope being a test's unit, handed out in collection order
    (`--no-loadscope-reorder`). Not xdist's `--dist loadgroup`: it names a test's group by rewriting `item._nodeid`,
    which pytest 9 no longer reads, so every test was a unit of its own and a group's tests went to both workers (the
    team server's tests at once on one experiment, in the CI run of 2026-12-03)."""
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

    return Units(config, log)


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


# One store made by the quick suite for the whole session, by whichever of `make test`'s workers first needs it (the
# suite takes ~3 min of both cores, once per worker before); each worker reads and changes a copy of its own.
@pytest.fixture(scope="session")
def quick_store(tmp_path_factory):
    """The folder of a store holding every exercise of the quick suite (`quick/<exercise>`), one seed each."""
    from filelock import FileLock

    from lm.commands import suite

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent   # the session's folder, above each worker's own
    built = shared / "quick-store"
    with FileLock(shared / "quick-store.lock"):
        if not (built / "built").exists():
            with pytest.MonkeyPatch.context() as mp:
                mp.delenv("MLFLOW_TRACKING_URI", raising=False)
                mp.setenv("TINYGPT_STORE", str(built))
                assert suite.main(["quick=true"]) == 0
            (built / "built").touch()
    return copied(built, tmp_path_factory.mktemp("quick-store"))


def copied(store: Path, to: Path) -> Path:
    """A copy of a store's folder (its database and artifacts) in `to`, its database pointing at its own artifacts."""
    import shutil

    shutil.copytree(store, to, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.lock*", "built"))
    moved(to / "mlflow.db", store, to)
    return to


def moved(db: Path, old: Path, new: Path) -> None:
    """A copied store's database pointing at its own artifacts: every text in it that names the old folder (runs',
    experiments' and models' artifact locations) names the new one."""
    import sqlite3

    with sqlite3.connect(db) as con:
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for column in [c[1] for c in con.execute(f"PRAGMA table_info('{table}')")]:
                con.execute(f'UPDATE "{table}" SET "{column}" = replace("{column}", ?, ?) '
                            f'WHERE typeof("{column}") = \'text\' AND instr("{column}", ?) > 0',
                            (str(old), str(new), str(old)))
    con.close()
