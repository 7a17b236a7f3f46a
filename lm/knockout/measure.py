"""Head knock-out: how much the validation loss rises when one head, one block's attention or one MLP is
replaced by its mean (or by zero) on the run's fixed validation batches.

`make heads` (lm/commands/heads.py) measures finished runs; every run measures itself at its end.

A head's output is its slice of the attention's output projection's input, (B, T, n_head · head_size) with the
heads side by side, so a forward pre-hook on `c_proj` knocks a head out without touching the model. Mean
ablation (the default) puts in the head's mean output over every scored position of the batches: what the head
says on average, so only the information it carries is lost. Zero ablation removes the output altogether. The
attention and the MLP of a block are knocked out whole, at their outputs (output bias included), as references.
"""
import time
from contextlib import contextmanager
from typing import NamedTuple

import pandas as pd
import torch

from lm.knockout.table import WINDOWS, Mode, Part, Target, metric
from lm.model.model import GPT, losses_of


def targets(model: GPT) -> list[Target]:
    out = []
    for b in range(1, model.config.n_layer + 1):
        out += [Target(Part.HEAD, b, h) for h in range(1, model.config.n_head + 1)]
        out += [Target(Part.ATTN, b), Target(Part.MLP, b)]
    return out


# --- the hooks -------------------------------------------------------------------------------------------
def _site(model: GPT, target: Target) -> tuple[torch.nn.Module, bool]:
    """The module whose input (pre-hook) or output (hook) a target replaces."""
    block = model.h[target.block - 1]
    if target.part is Part.HEAD:
        return block.attn.c_proj, True
    return (block.attn, False) if target.part is Part.ATTN else (block.mlp, False)


def _replace(target: Target, head_size: int, value: torch.Tensor):
    """A hook that puts value in the target's place: a head's slice of c_proj's input, or a module's output."""
    if target.part is Part.HEAD:
        cols = slice((target.head - 1) * head_size, target.head * head_size)

        def pre_hook(module, args):
            y = args[0].clone()                 # (B, T, n_head · head_size), the heads side by side
            y[..., cols] = value
            return (y, *args[1:])
        return pre_hook

    def hook(module, args, out):
        if isinstance(out, tuple):              # the attention returns (output, weights)
            return (value.expand_as(out[0]), *out[1:])
        return value.expand_as(out)
    return hook


@contextmanager
def knocked_out(model: GPT, target: Target, value: torch.Tensor):
    """The model with one target replaced by value (a vector broadcast over batch and positions)."""
    module, pre = _site(model, target)
    hook = _replace(target, model.config.n_embd // model.config.n_head, value)
    handle = module.register_forward_pre_hook(hook) if pre else module.register_forward_hook(hook)
    try:
        yield model
    finally:
        handle.remove()


def _recorder(sums: dict, keep: list, name, kept: list | None = None):
    """A hook adding a module's output (or, as a pre-hook, its input) over the scored positions into sums[name],
    and keeping the whole of it in kept, if given."""
    def record(module, args, out=None):
        t = args[0] if out is None else (out[0] if isinstance(out, tuple) else out)
        if kept is not None:
            kept.append(t)
        s = t[keep[0]].double().sum(0)
        sums[name] = sums.get(name, 0) + s
    return record


class Through(NamedTuple):
    """The intact block b run on the streams entering it, one per batch: its outputs (the streams entering the next
    block), its heads side by side before the attention joins them and the attention's output, and its targets'
    mean outputs over the batches' scored positions."""
    streams: list[torch.Tensor]
    # Kept for the block's targets: two more tensors the size of the streams, for the block being knocked out.
    heads: list[torch.Tensor]       # (B, T, n_embd): c_proj's input
    attended: list[torch.Tensor]    # (B, T, n_embd): what the attention adds to the stream
    means: dict


@torch.no_grad()
def through(model: GPT, b: int, streams: list[torch.Tensor], batches) -> Through:
    """The intact block b on the streams entering it (padding after a name's end is not scored, so it does not count
    in the means): for a head its (head_size,) slice; for the block's attention or MLP, (n_embd,)."""
    block = model.h[b - 1]
    sums, keep = {}, [None]   # keep: the scored positions of the current batch, (B, T)
    heads, attended = [], []
    handles = [block.attn.c_proj.register_forward_pre_hook(_recorder(sums, keep, Part.HEAD, heads)),
               block.attn.register_forward_hook(_recorder(sums, keep, Part.ATTN, attended)),
               block.mlp.register_forward_hook(_recorder(sums, keep, Part.MLP))]
    out, count = [], 0
    try:
        for x, (_, y) in zip(streams, batches):
            keep[0] = y >= 0
            count += int(keep[0].sum())
            out.append(block(x)[0])
    finally:
        for h in handles:
            h.remove()
    hs = model.config.n_embd // model.config.n_head
    means = {}
    for t in targets(model):
        if t.block == b:
            m = sums[Part.HEAD][(t.head - 1) * hs: t.head * hs] if t.part is Part.HEAD else sums[t.part]
            means[t] = (m / count).float()
    return Through(out, heads, attended, means)


def _mean_loss(logits_of, batches) -> float:
    """The mean cross-entropy over every scored position of the batches, logits_of(i, x) the i-th batch's logits."""
    total, n = 0.0, 0
    for i, (x, y) in enumerate(batches):
        total += losses_of(logits_of(i, x), y).double().sum().item()
        n += int((y >= 0).sum())
    return total / n


@torch.no_grad()
def loss(model: GPT, batches, first: int = 1, streams: list[torch.Tensor] | None = None) -> float:
    """The mean cross-entropy over every scored position of the batches: validation's val_loss. With streams,
    the residual streams entering block `first` (one per batch), only that block and those after it run: the
    same sums as the whole model's, to the bit."""
    if streams is None:
        return _mean_loss(lambda i, x: model(x)[0], batches)
    return _mean_loss(lambda i, x: model.rest(streams[i], first - 1)[0], batches)


@torch.no_grad()
def knocked_loss(model: GPT, target: Target, value: torch.Tensor, entering: list[torch.Tensor], inside: Through,
                 batches) -> float:
    """loss() with the target knocked out, from the intact block's insides: its attention is not run again, only
    what the target changes from there on (a head: the join of the heads and after; the attention: the block after
    it; the MLP: the MLP and after). The same sums as the whole model's with the target's hook, to the bit."""
    block = model.h[target.block - 1]

    def logits_of(i, x):
        if target.part is Part.HEAD:
            attended = block.attn.join(inside.heads[i])   # the hook puts value in the head's slice
        elif target.part is Part.ATTN:                    # the attention is not run: value is its output
            attended = value.expand_as(inside.attended[i])
        else:
            attended = inside.attended[i]                 # the hook puts value in the MLP's place
        return model.rest(block.finish(entering[i], attended), target.block)[0]

    with knocked_out(model, target, value):
        return _mean_loss(logits_of, batches)


def windows(batches, n: int = WINDOWS) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The first n windows of the batches, in batches of the same size."""
    out, left = [], n
    for x, y in batches:
        if left <= 0:
            break
        out.append((x[:left], y[:left]))
        left -= len(x)
    return out


@torch.no_grad()
def knockout(model: GPT, batches, modes=(Mode.MEAN, Mode.ZERO)) -> pd.DataFrame:
    """One row per (target, mode): block, head (empty for a whole attention or MLP), part, mode, the loss with
    the target knocked out and its increase over the intact model's loss, on the given batches (see windows()).
    The cost is in `.attrs["seconds"]` (wall) and `.attrs["cpu_seconds"]`, the intact loss in `.attrs["base_loss"]`."""
    started, cpu = time.perf_counter(), time.process_time()
    was_training = model.training
    model.eval()
    batches = list(batches)
    knocked = {}
    try:
        # Block by block: each block's targets run from the residual stream the intact model brings to that block,
        # so the blocks before it are not run again for every target. Within a block, each target runs from the
        # intact block's insides (knocked_loss), so the block's own attention is not run again either. The losses
        # are the same to the bit as running the whole model per target (tests/analysis/test_knockout.py); the
        # time saved grows with the blocks (docs/notebook.md).
        streams = [model.embed(x) for x, _ in batches]
        for b in range(1, model.config.n_layer + 1):
            inside = through(model, b, streams, batches)
            for mode in modes:
                for t, mean in inside.means.items():
                    value = mean if mode is Mode.MEAN else torch.zeros_like(mean)
                    knocked[t, mode] = knocked_loss(model, t, value, streams, inside, batches)
            streams = inside.streams
        base = loss(model, batches, model.config.n_layer + 1, streams)
        rows = [{"block": t.block, "head": t.head, "part": t.part.value, "mode": Mode(mode).value,
                 "metric": metric(t, Mode(mode)), "loss": knocked[t, mode], "increase": knocked[t, mode] - base}
                for mode in modes for t in targets(model)]
    finally:
        model.train(was_training)
    table = pd.DataFrame(rows).astype({"head": "Int64"})
    table.attrs.update(base_loss=base, seconds=time.perf_counter() - started, cpu_seconds=time.process_time() - cpu)
    return table


