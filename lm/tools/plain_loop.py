"""The lessons' model trained by a plain PyTorch loop, as a process of its own: the floor that `make bench` holds a
whole `make train` process against, start-up and a final evaluation included.

    python -m lm.tools.plain_loop STEPS

The same model (lm/model/model.py), corpus, batch shape, optimiser, learning rate and thread count as `make train` at
its default options; the batches are drawn here, with no Lightning, no MLflow, no checkpoint and no probes. It
prints the validation loss over `make train`'s validation set size (20 batches of 64 windows), the seconds and the
milliseconds a training step took. `train` is the same loop for any run's config, as make bench's study section
runs it beside the suite.
"""
import os
import sys
import time
from pathlib import Path
from typing import NamedTuple

import torch

from lm.model.model import GPT
from lm.spec import config


class Trained(NamedTuple):
    val_loss: float
    seconds: float          # the model built, trained and validated: what a run of the harness does beyond it is its own
    ms_per_step: float


def train(cfg, steps: int, threads: int) -> Trained:
    """The run's model, trained for `steps` by the plain loop on `threads` torch threads, then validated."""
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(threads)
    folder = os.environ.get("TINYGPT_DATA_DIR") or Path(cfg.data.cache_dir).expanduser()
    text = (Path(folder) / cfg.data.filename).read_text(encoding="utf-8")
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text])
    split = int(len(data) * (1 - cfg.data.val_fraction))
    train_part, val = data[:split], data[split:]
    T, B = cfg.model.block_size, cfg.train.batch_size

    def batch(source, n, g=None):
        i = torch.randint(len(source) - T - 1, (n,), generator=g)
        x = torch.stack([source[j:j + T] for j in i])
        y = torch.stack([source[j + 1:j + T + 1] for j in i])
        return x, y

    started = time.perf_counter()
    model = GPT(cfg.model)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.train.lr, betas=tuple(cfg.train.betas), foreach=True)
    model.train()
    fit = time.perf_counter()  # the steps alone, as the harness's ms_per_step times them
    for _ in range(steps):
        x, y = batch(train_part, B)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    ms = 1000 * (time.perf_counter() - fit) / max(1, steps)
    model.eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        losses = []
        for _ in range(cfg.eval.val_batches):
            x, y = batch(val, cfg.eval.val_batch_size, g)
            losses.append(model(x, y)[1].item())
    return Trained(sum(losses) / len(losses), time.perf_counter() - started, ms)


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    steps = int(argv[0]) if argv else 3000
    done = train(config.load([]), steps, os.cpu_count())
    print(f"val_loss {done.val_loss:.4f} after {steps} steps in {time.perf_counter() - started:.1f} s; "
          f"{done.ms_per_step:.2f} ms/step")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
