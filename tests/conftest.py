import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Tests read the real corpora from the shared folder beside the checkout, as CI does.
os.environ.setdefault("TINYGPT_DATA_DIR", str((ROOT.parent / "shared" / "data").resolve()))
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
DATA = Path(os.environ["TINYGPT_DATA_DIR"])


def pytest_configure(config):
    if not (DATA / "tinyshakespeare.txt").is_file():
        pytest.exit(f"the corpora are not in {DATA}; set TINYGPT_DATA_DIR to the folder holding tinyshakespeare.txt",
                    returncode=2)


@pytest.fixture
def store(tmp_path, monkeypatch):
    """An empty MLflow store of its own for each test."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "mlruns"))
    return tmp_path / "mlruns"
