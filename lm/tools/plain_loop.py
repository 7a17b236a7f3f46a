"""The lessons' model trained by a plain PyTorch loop, as a process of its own: the floor that `make bench` holds a
whole `make train` process against, start-up and the recipe's validations included.

    python -m lm.tools.plain_loop STEPS [OVERRIDE ...]

The same model (lm/model/model.py), corpus, batch shape, optimiser, learning rate and thread count as `make train`
with the same overrides; the batches are drawn here, with no Lightning, no MLflow, no checkpoint and no probes. It
validates as the lessons' own loops do and as `make train` does: before training and every `eval.every` steps (lesson
000: "validation loss before training", then `if step % 500 == 0`; lesson 002 after its first step and every
`eval_interval`), on one fixed set of `eval.val_batches` batches of `eval.val_batch_size` windows (lesson 000's 20 of
64), and once more at the end if the last step was not one of those. It prints the last validation loss, the seconds and the milliseconds a
training step took. `train` is the same loop for any run's config, as make bench's study section runs it beside the
suite.
"""
import os
import sys
import time
from pathlib import Path
from typing import NamedTuple

import torch

from lm import process
from lm.model import threads as torch_threads
from lm.model.model import GPT, train_flops
from lm.settings import config
from lm.settings.errors import ConfigError


class Trained(NamedTuple):
    val_loss: float
    seconds: float          # the model built, trained and validated: what a run of the harness does beyond it is its own
    ms_per_step: float
    validation_s: float     # one validation pass, the mean of the recipe's
    validations: int        # how many the recipe made: before training, every eval.every steps, and the last step's


def train(cfg, steps: int, threads: int) -> Trained:
    """The run's model, trained for `steps` by the plain loop on `threads` torch threads, validated on the recipe's
    schedule."""
    torch.manual_seed(cfg.seed)
    torch_threads.use(threads, "plain loop")
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

    g = torch.Generator().manual_seed(0)
    held_out = [batch(val, cfg.eval.val_batch_size, g) for _ in range(cfg.eval.val_batches)]   # the same each time
    every = cfg.eval.every
    validating = []   # seconds of each validation pass

    def validate() -> float:
        t = time.perf_counter()
        model.eval()
        with torch.no_grad():
            loss = sum(model(x, y)[1].item() for x, y in held_out) / len(held_out)
        model.train()
        validating.append(time.perf_counter() - t)
        return loss

    started = time.perf_counter()
    model = GPT(cfg.model)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.train.lr, betas=tuple(cfg.train.betas), foreach=True)
    model.train()
    fit = time.perf_counter()
    val_loss = validate()
    for step in range(1, steps + 1):
        x, y = batch(train_part, B)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % every == 0 or step == steps:
            val_loss = validate()
    end = time.perf_counter()
    in_steps = end - fit - sum(validating)   # the steps alone, as the harness's ms_per_step times them
    seconds = end - started
    return Trained(val_loss, seconds, 1000 * in_steps / max(1, steps), sum(validating) / len(validating), len(validating))


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    if argv and not argv[0].isdigit():
        return process.fail(f"STEPS must be a whole number, not {argv[0]!r}: python -m lm.tools.plain_loop STEPS [OVERRIDE ...]")
    steps = int(argv[0]) if argv else 3000
    try:
        cfg = config.load(argv[1:])
    except ConfigError as e:
        return process.fail(str(e))
    asked = cfg.runtime.threads or torch_threads.automatic(train_flops(cfg.model, cfg.train.batch_size))
    done = train(cfg, steps, asked)
    print(f"val_loss {done.val_loss:.4f} after {steps} steps in {time.perf_counter() - started:.1f} s; "
          f"{done.ms_per_step:.2f} ms/step; {done.validations} validations of {done.validation_s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
