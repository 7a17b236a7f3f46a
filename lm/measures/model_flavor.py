"""The trained model in MLflow's PyTorch flavor, as a graph that loads without running pickled code.

Every finished run logs `runs:/<id>/model` beside `model.pt`:

- `model` is `mlflow.pytorch.log_model(..., serialization_format="pt2")`: torch.export's archive of GPT.forward,
  token ids (batch, time) in, (logits, None) out, with any batch and any time up to the context. It loads with
  `mlflow.pytorch.load_model("runs:/<id>/model")` as a torch.fx GraphModule that computes the same logits; the
  vocabulary and the context are in the model's metadata. MLflow checks the archive holds only tensors and plain
  data (no pickled objects, whose loading could run code) when MLFLOW_ALLOW_PICKLE_DESERIALIZATION is false;
  `load()` below sets it so for the call, whatever the environment says.
- `model.pt` stays the project's own format (the GPT class's state_dict, config and vocabulary, read with
  `torch.load(weights_only=True)`): `make sample`, the report and the temperature exercise read it, since the
  exported graph has lost the module's structure (its heads, its KV-cached decoder, its config object).
"""
import contextlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import mlflow
import numpy as np
import torch
from mlflow.models import ModelSignature
from mlflow.types import Schema, TensorSpec

from lm.model import checkpoint
from lm.model.model import GPT
from lm.model.sample import _pick, check_temperature
from lm.tracking.store import pointed_at

NAME = "model"


@contextmanager
def _env(key: str, value: str | None):
    before = os.environ.get(key)
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before


def signature(model: GPT) -> ModelSignature:
    c = model.config
    return ModelSignature(inputs=Schema([TensorSpec(np.dtype(np.int64), (-1, -1), "idx")]),
                          outputs=Schema([TensorSpec(np.dtype(np.float32), (-1, -1, c.vocab_size), "logits")]))


def log(store, run_id: str, model: GPT, chars: list[str], bos: int | None) -> None:
    """model (eval mode, on the CPU) as the run's MLflow model `model`, in the pt2 format."""
    c = model.config
    # Two windows of the whole context: a batch and a time of 1 would be fixed as constants in the graph.
    example = torch.zeros(2, c.block_size, dtype=torch.long)
    # Created here, in the run's experiment: log_model would create it in the fluent API's current experiment.
    logged = store.client.create_logged_model(store.client.get_run(run_id).info.experiment_id, name=NAME,
                                              source_run_id=run_id, model_type="tinygpt")
    with pointed_at(store.uri), torch.no_grad():  # log_model writes through the fluent API, to the process's store
        mlflow.pytorch.log_model(model, name=NAME, run_id=run_id, model_id=logged.model_id, serialization_format="pt2",
                                 input_example=example, signature=signature(model),
                                 metadata={"chars": chars, "bos": bos, "block_size": c.block_size},
                                 pip_requirements=[f"torch=={torch.__version__.split('+')[0]}"])


def log_from_run(store, run_id: str) -> None:
    """The run's own model.pt (a twin's, copied from its leader) as its MLflow model: MLflow finds `runs:/<id>/model`
    only among the models whose source run is that run."""
    with tempfile.TemporaryDirectory() as tmp:
        model, meta = checkpoint.load(Path(store.client.download_artifacts(run_id, "model.pt", tmp)))
    log(store, run_id, model, meta["chars"], meta["bos"])


def load(uri: str, tracking_uri: str | None = None) -> tuple[torch.nn.Module, dict]:
    """A logged model (`runs:/<id>/model`) and its metadata (chars, bos, block_size), loaded with MLflow's pickle
    check on, from tracking_uri or the store MLflow is pointed at."""
    # The process's store switched for the call and put back after: a URI set in this process by
    # mlflow.set_tracking_uri wins over the environment, so MLFLOW_TRACKING_URI alone would not do.
    store = pointed_at(tracking_uri) if tracking_uri else contextlib.nullcontext()
    with _env("MLFLOW_ALLOW_PICKLE_DESERIALIZATION", "false"), store:
        return mlflow.pytorch.load_model(uri), mlflow.models.get_model_info(uri).metadata


@torch.inference_mode()
def generate(module: torch.nn.Module, meta: dict, prompt: str, length: int, temperature: float = 1.0,
             seed: int = 1) -> str:
    """Text from a loaded model: one forward pass of the window per character (the graph has no KV cache)."""
    check_temperature(temperature)
    chars, bos, T = meta["chars"], meta["bos"], meta["block_size"]
    stoi = {ch: i for i, ch in enumerate(chars)}
    ids = ([bos] if bos is not None else []) + [stoi[ch] for ch in prompt]
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(length):
        logits = module(torch.tensor([ids[-T:]]))[0][0, -1]
        nxt = _pick(logits, temperature, g)
        if nxt == bos:
            break
        ids.append(nxt)
        out.append(chars[nxt])
    return prompt + "".join(out)
