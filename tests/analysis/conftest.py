"""A copy of the quick suite's store (tests/conftest.py) for a report test that changes it."""
import shutil

import pytest
from mlflow.tracking import MlflowClient


@pytest.fixture
def store_copy(quick_store, tmp_path):
    """A copy of the quick store's database to change; the artifacts stay where the original's are."""
    folder = tmp_path / "copy"
    folder.mkdir()
    shutil.copy(quick_store / "mlflow.db", folder / "mlflow.db")
    return folder, MlflowClient(f"sqlite:///{folder}/mlflow.db")


# Two small stores for the session, made once by whichever xdist worker first needs them: nopos002 at quick size as
# it is (A), and again with its `pos` variant trained at another learning rate (B), from an exercise folder of its own.
CHANGED = ("  pos: []\n", "  pos: [train.lr=0.004]\n")


@pytest.fixture(scope="session")
def nopos002_stores(tmp_path_factory):
    """The folders of store A (nopos002 as it is) and store B (its pos variant changed), quick size, one seed each."""
    import os
    from pathlib import Path

    from filelock import FileLock

    from lm.commands import suite

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    built = shared / "nopos002-stores"
    with FileLock(shared / "nopos002-stores.lock"):
        if not (built / "built").exists():
            changed = built / "experiments"
            changed.mkdir(parents=True, exist_ok=True)
            text = (Path(__file__).resolve().parents[2] / "experiments" / "nopos002.yaml").read_text()
            assert CHANGED[0] in text
            (changed / "nopos002.yaml").write_text(text.replace(*CHANGED))
            for name, folder in (("a", None), ("b", changed)):
                with pytest.MonkeyPatch.context() as mp:
                    mp.delenv("MLFLOW_TRACKING_URI", raising=False)
                    mp.setenv("TINYGPT_STORE", str(built / name))
                    if folder:
                        mp.setenv("TINYGPT_EXPERIMENTS", str(folder))
                    assert suite.main(["quick=true", "ablations=[nopos002]"]) == 0
            (built / "built").touch()
    return built / "a", built / "b"
