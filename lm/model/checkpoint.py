"""A trained model as one file: weights, the model config and the vocabulary, loaded back safely."""
from dataclasses import asdict
from pathlib import Path

import torch

from lm.model.model import GPT, GPTConfig
from lm.settings.errors import CheckpointError  # noqa: F401  (raised here, caught before torch is imported)

FORMAT = 1


def save(path: Path, model: GPT, chars: list[str], bos: int | None) -> None:
    state = {"format": FORMAT, "model": asdict(model.config), "chars": chars, "bos": -1 if bos is None else bos,
             "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()}}
    tmp = Path(path).with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)  # never a half-written file under the real name


def load(path: Path, expect: GPTConfig | None = None) -> tuple[GPT, dict]:
    """The model and its metadata. weights_only: a checkpoint is data, never code to run."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise CheckpointError(f"{path} is not a readable checkpoint ({type(e).__name__})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a tinygpt checkpoint (format {FORMAT})")
    config = GPTConfig(**state["model"])
    if expect is not None and config != expect:
        diff = ", ".join(f"model.{k}={v!r} (checkpoint has {getattr(config, k)!r})"
                         for k, v in asdict(expect).items() if getattr(config, k) != v)
        raise CheckpointError(f"the checkpoint was trained with a different config: {diff}")
    model = GPT(config)
    model.load_state_dict(state["state_dict"])
    return model.eval(), {"chars": state["chars"], "bos": None if state["bos"] < 0 else state["bos"]}
