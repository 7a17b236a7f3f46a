"""One store made by the quick suite, shared by every report test of the session (the suite takes ~40 s)."""
import shutil

import pytest
from mlflow.tracking import MlflowClient


@pytest.fixture(scope="session")
def quick_store(tmp_path_factory):
    """The folder of a store holding every exercise of the quick suite (`quick/<exercise>`), one seed each."""
    from lm import suite

    root = tmp_path_factory.mktemp("quick-store")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        mp.setenv("TINYGPT_STORE", str(root))
        assert suite.main(["quick=true"]) == 0
    return root


@pytest.fixture
def store_copy(quick_store, tmp_path):
    """A copy of the quick store's database to change; the artifacts stay where the original's are."""
    folder = tmp_path / "copy"
    folder.mkdir()
    shutil.copy(quick_store / "mlflow.db", folder / "mlflow.db")
    return folder, MlflowClient(f"sqlite:///{folder}/mlflow.db")
