"""Head knock-out: how much the validation loss rises when one head, one block's attention or one MLP is
replaced by its mean (or by zero) on the run's fixed validation batches.

    python -m lm.knockout run=RUN_ID [force=true]          # `make heads RUN=...`: log it, print the head table
    python -m lm.knockout exercise=heads [quick=true]      # `make heads EXERCISE=...`: every finished run

A head's output is its slice of the attention's output projection's input, (B, T, n_head · head_size) with the
heads side by side, so a forward pre-hook on `c_proj` knocks a head out without touching the model. Mean
ablation (the default) puts in the head's mean output over every scored position of the batches: what the head
says on average, so only the information it carries is lost. Zero ablation removes the output altogether. The
attention and the MLP of a block are knocked out whole, at their outputs (output bias included), as references.
"""
import sys
import time
from contextlib import contextmanager

import pandas as pd
import torch

from lm.knockout_table import TYPES, WINDOWS, Mode, Part, Target, head_table, headline, metric
from lm.model import GPT, losses_of


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


def _recorder(sums: dict, keep: list, name):
    """A hook adding a module's output (or, as a pre-hook, its input) over the scored positions into sums[name]."""
    def record(module, args, out=None):
        t = args[0] if out is None else (out[0] if isinstance(out, tuple) else out)
        s = t[keep[0]].double().sum(0)
        sums[name] = sums.get(name, 0) + s
    return record


@torch.no_grad()
def through(model: GPT, b: int, streams: list[torch.Tensor], batches) -> tuple[list[torch.Tensor], dict]:
    """The intact block b's outputs for the streams entering it, one per batch, and its targets' mean outputs over
    the batches' scored positions (padding after a name's end is not scored, so it does not count): for a head,
    its (head_size,) slice; for the block's attention or MLP, (n_embd,)."""
    block = model.h[b - 1]
    sums, keep = {}, [None]   # keep: the scored positions of the current batch, (B, T)
    handles = [block.attn.c_proj.register_forward_pre_hook(_recorder(sums, keep, Part.HEAD)),
               block.attn.register_forward_hook(_recorder(sums, keep, Part.ATTN)),
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
    return out, means


@torch.no_grad()
def loss(model: GPT, batches, first: int = 1, streams: list[torch.Tensor] | None = None) -> float:
    """The mean cross-entropy over every scored position of the batches: validation's val_loss. With streams,
    the residual streams entering block `first` (one per batch), only that block and those after it run: the
    same sums as the whole model's, to the bit."""
    total, n = 0.0, 0
    for i, (x, y) in enumerate(batches):
        logits = model(x)[0] if streams is None else model.rest(streams[i], first - 1)[0]
        total += losses_of(logits, y).double().sum().item()
        n += int((y >= 0).sum())
    return total / n


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
        # so the blocks before it are not run again for every target: 2.1 s instead of 3.0 s for the lessons'
        # model on 512 windows, 6.4 s instead of 10.5 s with 4 blocks (2 threads, medians of 3), the same losses
        # to the bit (tests/analysis/test_knockout.py).
        streams = [model.embed(x) for x, _ in batches]
        for b in range(1, model.config.n_layer + 1):
            after, means = through(model, b, streams, batches)
            for mode in modes:
                for t, mean in means.items():
                    value = mean if mode is Mode.MEAN else torch.zeros_like(mean)
                    with knocked_out(model, t, value):
                        knocked[t, mode] = loss(model, batches, b, streams)
            streams = after
        base = loss(model, batches, model.config.n_layer + 1, streams)
        rows = [{"block": t.block, "head": t.head, "part": t.part.value, "mode": Mode(mode).value,
                 "metric": metric(t, Mode(mode)), "loss": knocked[t, mode], "increase": knocked[t, mode] - base}
                for mode in modes for t in targets(model)]
    finally:
        model.train(was_training)
    table = pd.DataFrame(rows).astype({"head": "Int64"})
    table.attrs.update(base_loss=base, seconds=time.perf_counter() - started, cpu_seconds=time.process_time() - cpu)
    return table


# --- `make heads`: knock-out for runs already in the store ------------------------------------------------
USAGE = "usage: python -m lm.knockout run=RUN_ID | exercise=NAME [quick=true] [force=true] [tracking_uri=URI]"


def _config(params: dict, cls, prefix: str):
    """One section of a run's config, rebuilt from its flat params (logged as strings) and checked by its schema."""
    from dataclasses import fields

    from omegaconf import OmegaConf

    known = {f.name for f in fields(cls)}
    raw = {k.removeprefix(prefix + "."): (None if v == "None" else v) for k, v in params.items()
           if k.startswith(prefix + ".") and k.removeprefix(prefix + ".") in known}
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(cls), raw))


def for_run(store, run_id: str, force: bool = False) -> tuple[pd.DataFrame, pd.DataFrame | None, bool]:
    """A finished run's knock-out table and head statistics; computed and logged to the run (metrics at its last
    step, knockout.csv, and attention_lines.json if it lacks one) unless it has them already. Returns whether
    it computed."""
    import tempfile
    from pathlib import Path

    import mlflow

    from lm import checkpoint, probes
    from lm.config import EvalConfig
    from lm.data import DataConfig, load_corpus, val_batches

    run = store.client.get_run(run_id)
    with tempfile.TemporaryDirectory() as tmp:
        def artifact(name):
            try:
                return Path(mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=name, dst_path=tmp,
                                                                tracking_uri=store.uri))
            except Exception:  # MLflow raises several kinds for a file that is not there
                return None

        heads_csv = artifact("heads.csv")
        heads = pd.read_csv(heads_csv) if heads_csv else None
        done = artifact("knockout.csv")
        if done and not force:
            table = pd.read_csv(done).astype({"head": "Int64"})
            return table, heads, False
        model_pt = artifact("model.pt")
        if model_pt is None:
            raise ValueError(f"run {run_id} has no model.pt to knock heads out of")
        model, _ = checkpoint.load(model_pt)
        params = run.data.params
        data, ev = _config(params, DataConfig, "data"), _config(params, EvalConfig, "eval")
        corpus = load_corpus(data)
        val = val_batches(corpus, ev.val_batches, ev.val_batch_size, model.config.block_size)
        if heads is None:
            heads = probes.head_statistics(model, corpus, val, ev.head_windows, ev.head_skip)
        table = knockout(model, windows(val))
        step = int(params.get("train.steps", 0))
        store.log_metrics(run_id, headline(table, heads), step)
        out = Path(tmp) / "out"
        out.mkdir()
        table.to_csv(out / "knockout.csv", index=False)
        if artifact("attention_lines.json") is None:
            (out / "attention_lines.json").write_text(
                probes.to_json(probes.attention_lines(model, corpus, data.heatmap_line), compact=True),
                encoding="utf-8")
        store.client.log_artifacts(run_id, str(out))
    return table, heads, True


def show(table: pd.DataFrame, heads: pd.DataFrame | None) -> str:
    """The head table for the terminal: numbered from 1, increases in nats per character, scores as weights."""
    df = head_table(table, heads)
    df["head"] = [str(h) if p == Part.HEAD.value else f"({p})" for h, p in zip(df["head"], df["part"])]
    names = {"knockout_mean": "knock-out (mean)", "knockout_zero": "knock-out (zero)", "type_score": "score",
             "max_weight": "heaviest", **{col: name for name, col in TYPES.items()}}
    df = df.drop(columns="part").rename(columns=names)
    for col in df.columns[2:]:
        if col != "type":
            signed = col.startswith("knock-out")
            df[col] = [("" if pd.isna(x) else f"{x:+.3f}" if signed else f"{x:.2f}") for x in df[col]]
    return df.fillna("").to_string(index=False)


def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    from lm import exercises
    from lm.data import DataError
    from lm.errors import ConfigError
    from lm.tracking import Store, TrackingError

    opts = {"run": "", "exercise": "", "quick": "false", "force": "false", "tracking_uri": ""}
    for arg in sys.argv[1:] if argv is None else argv:
        key, eq, value = arg.partition("=")
        if not eq or key not in opts:
            print(f"error: unknown option {arg!r}; {USAGE}", file=sys.stderr)
            return 2
        opts[key] = value
    if bool(opts["run"]) == bool(opts["exercise"]):
        print(f"error: give one of run= or exercise=; {USAGE}", file=sys.stderr)
        return 2
    quick, force = (opts[k].lower() in ("true", "1", "yes") for k in ("quick", "force"))
    try:
        chosen = exercises.select(opts["exercise"]) if opts["exercise"] else []
        store = Store(opts["tracking_uri"] or None)
        if opts["run"]:
            try:
                store.client.get_run(opts["run"])
            except Exception:
                raise ConfigError(f"run={opts['run']!r}: no such run in {store.uri}") from None
    except (ConfigError, TrackingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if opts["run"]:
        try:
            table, heads, computed = for_run(store, opts["run"], force)
        except (ValueError, DataError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        intact = float((table["loss"] - table["increase"]).iloc[0])
        print(f"run {opts['run']}: validation loss {intact:.3f} on the first {WINDOWS} validation windows, and its "
              f"increase when each head, attention or MLP is knocked out (nats per character)")
        print(show(table, heads))
        if computed:
            print(f"{len(table)} knock-outs in {table.attrs['seconds']:.1f} s ({table.attrs['cpu_seconds']:.1f} s of "
                  f"CPU, {torch.get_num_threads()} thread{'s' * (torch.get_num_threads() > 1)})")
        return 0
    for ex in chosen:
        name = ("quick/" if quick else "") + ex.name
        exp = store.client.get_experiment_by_name(name)
        runs = [] if exp is None else store.client.search_runs(
            [exp.experiment_id], "attributes.status = 'FINISHED' and tags.variant != ''", max_results=10_000)
        if not runs:
            print(f"{name}: no finished runs")
            continue
        bar = tqdm(runs, desc=name, unit="run")
        for run in bar:
            label = run.info.run_name or run.info.run_id
            try:
                table, _, computed = for_run(store, run.info.run_id, force)
            except (ValueError, DataError) as e:
                bar.write(f"{name} {label}: skipped, {e}")
                continue
            heads_only = table[(table["part"] == Part.HEAD.value) & (table["mode"] == Mode.MEAN.value)]
            top = heads_only.loc[heads_only["increase"].idxmax()]
            how = f"{table.attrs['seconds']:.1f} s" if computed else "logged before"
            bar.write(f"{name} {label}: largest head block {top['block']}, head {top['head']} "
                      f"{top['increase']:+.3f} ({how})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
