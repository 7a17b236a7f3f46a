"""Loading a run's MLflow model runs no code from the store (lm/measures/model_flavor.py): a pickled model is refused."""
import pathlib

import mlflow
import pytest
import torch
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from lm.measures import model_flavor
from lm.tracking.store import pointed_at


class Payload(torch.nn.Module):
    """A "model" whose unpickling touches a file: what an untrusted store could hold instead of a GPT."""

    def __init__(self, marker: pathlib.Path):
        super().__init__()
        self.marker = marker

    def __reduce__(self):
        return pathlib.Path.touch, (self.marker,)


def test_a_pickled_model_in_the_store_is_refused_and_its_code_never_runs(tmp_path, monkeypatch):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = MlflowClient(uri)
    exp = client.create_experiment("x", artifact_location=(tmp_path / "artifacts").as_uri())
    run_id = client.create_run(exp).info.run_id
    marker = tmp_path / "code-ran"
    mlflow.pytorch.save_model(Payload(marker), str(tmp_path / "model"), serialization_format="pickle",
                              pip_requirements=["torch"])
    client.log_artifacts(run_id, str(tmp_path / "model"), "model")
    assert not marker.exists()
    monkeypatch.setenv("MLFLOW_ALLOW_PICKLE_DESERIALIZATION", "true")   # MLflow's default; load() overrides it
    with pytest.raises(MlflowException, match="(?i)pickle"):
        model_flavor.load(f"runs:/{run_id}/model", uri)
    assert not marker.exists()
    with pointed_at(uri):   # the payload is live: MLflow's own default loader runs it
        try:
            mlflow.pytorch.load_model(f"runs:/{run_id}/model")
        except Exception:
            pass
    assert marker.exists()
