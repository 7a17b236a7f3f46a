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
