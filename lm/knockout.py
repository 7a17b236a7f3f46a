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
import math
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum

import pandas as pd
import torch

from lm.model import GPT, token_losses


class Mode(str, Enum):
    MEAN = "mean"   # the output replaced by its mean over the batches and positions
    ZERO = "zero"   # the output replaced by zeros


class Part(str, Enum):
    HEAD = "head"
    ATTN = "attn"
    MLP = "mlp"


@dataclass(frozen=True)
class Target:
    """What is knocked out; blocks and heads are numbered from 1, as the report numbers them."""
    part: Part
    block: int
    head: int | None = None

    @property
    def key(self) -> str:
        return f"b{self.block}h{self.head}" if self.part is Part.HEAD else f"b{self.block}_{self.part.value}"


def targets(model: GPT) -> list[Target]:
    out = []
    for b in range(1, model.config.n_layer + 1):
        out += [Target(Part.HEAD, b, h) for h in range(1, model.config.n_head + 1)]
        out += [Target(Part.ATTN, b), Target(Part.MLP, b)]
    return out


def metric(target: Target, mode: Mode) -> str:
    """`knockout_b1h3` for mean ablation, `knockout_zero_b1h3` for zero ablation."""
    return f"knockout_{'zero_' if mode is Mode.ZERO else ''}{target.key}"


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


@torch.no_grad()
def means(model: GPT, batches) -> dict[Target, torch.Tensor]:
    """Every target's mean output over the scored positions of the batches (padding after a name's end is not
    scored, so it does not count): for a head, its (head_size,) slice; for a block's attention or MLP, (n_embd,)."""
    sums, count, handles = {}, 0, []
    keep = [None]   # the scored positions of the current batch, (B, T)

    def recorder(name):
        def record(module, args, out=None):
            t = args[0] if out is None else (out[0] if isinstance(out, tuple) else out)
            s = t[keep[0]].double().sum(0)
            sums[name] = sums.get(name, 0) + s
        return record

    for b, block in enumerate(model.h, start=1):
        handles.append(block.attn.c_proj.register_forward_pre_hook(recorder(("heads", b))))
        handles.append(block.attn.register_forward_hook(recorder(("attn", b))))
        handles.append(block.mlp.register_forward_hook(recorder(("mlp", b))))
    try:
        for x, y in batches:
            keep[0] = y >= 0
            count += int(keep[0].sum())
            model(x)
    finally:
        for h in handles:
            h.remove()
    hs = model.config.n_embd // model.config.n_head
    out = {}
    for t in targets(model):
        if t.part is Part.HEAD:
            m = sums["heads", t.block][(t.head - 1) * hs: t.head * hs]
        else:
            m = sums[t.part.value, t.block]
        out[t] = (m / count).float()
    return out


@torch.no_grad()
def loss(model: GPT, batches) -> float:
    """The mean cross-entropy over every scored position of the batches: validation's val_loss."""
    total, n = 0.0, 0
    for x, y in batches:
        total += token_losses(model, x, y).double().sum().item()
        n += int((y >= 0).sum())
    return total / n


# The first 512 windows of the fixed validation set: the intact and the knocked-out model read the same
# characters, so the difference is far steadier than either loss; every window costs 2 passes per head.
WINDOWS = 512


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
    try:
        base = loss(model, batches)
        avg = means(model, batches) if Mode.MEAN in modes else {}
        rows = []
        for mode in modes:
            for t in targets(model):
                value = avg[t] if mode is Mode.MEAN else torch.zeros(
                    model.config.n_embd // model.config.n_head if t.part is Part.HEAD else model.config.n_embd)
                with knocked_out(model, t, value):
                    knocked = loss(model, batches)
                rows.append({"block": t.block, "head": t.head, "part": t.part.value, "mode": Mode(mode).value,
                             "metric": metric(t, Mode(mode)), "loss": knocked, "increase": knocked - base})
    finally:
        model.train(was_training)
    table = pd.DataFrame(rows).astype({"head": "Int64"})
    table.attrs.update(base_loss=base, seconds=time.perf_counter() - started, cpu_seconds=time.process_time() - cpu)
    return table


# --- what a head is, and what the run logs ---------------------------------------------------------------
# A head's type is its strongest statistic: each of these is a mean weight on the keys its pattern names
# (heads.csv's columns), so they compare on one scale.
TYPES = {"previous": "prev_token_score", "two back": "m2", "itself": "m0", "duplicate": "dup_token_score",
         "induction": "induction_score", "word start": "word_start_score"}


def head_types(heads: pd.DataFrame) -> pd.DataFrame:
    """heads.csv's rows with `type` (the strongest statistic's name) and `type_score` (its value)."""
    columns = {name: col for name, col in TYPES.items() if col in heads}
    scores = heads[list(columns.values())].rename(columns={c: n for n, c in columns.items()}).fillna(-math.inf)
    return heads.assign(type=scores.idxmax(axis=1), type_score=scores.max(axis=1))


def headline(table: pd.DataFrame, heads: pd.DataFrame | None = None) -> dict[str, float]:
    """The metrics a run logs: every target's increase, the largest single head's, the cost, and, given the
    run's head statistics, the heads the lessons' claims name: block 1's previous-character head (the block-1
    head with the highest previous-token score) against the other block-1 heads, and the sharpest head (the
    highest average heaviest weight)."""
    out = dict(zip(table["metric"], table["increase"].astype(float)))
    mean = table[(table["mode"] == Mode.MEAN.value) & (table["part"] == Part.HEAD.value)]
    out["knockout_head_max"] = float(mean["increase"].max())
    out["knockout_seconds"] = float(table.attrs.get("seconds", math.nan))
    if heads is None or heads.empty:
        return out
    effect = mean.set_index(["block", "head"])["increase"].astype(float)
    b1 = heads[heads["block"] == 1]
    if "prev_token_score" in heads and b1["prev_token_score"].notna().any():
        prev = b1.loc[b1["prev_token_score"].idxmax()]
        out["knockout_prev_head_b1"] = float(effect[1, int(prev["head"])])
        others = [effect[1, int(h)] for h in b1["head"] if int(h) != int(prev["head"])]
        if others:
            out["knockout_other_b1_max"] = float(max(others))
    if "max_weight" in heads and heads["max_weight"].notna().any():
        sharp = heads.loc[heads["max_weight"].idxmax()]
        out["knockout_sharpest_head"] = float(effect[int(sharp["block"]), int(sharp["head"])])
    return out


def head_table(table: pd.DataFrame, heads: pd.DataFrame | None) -> pd.DataFrame:
    """One row per head and per whole attention or MLP: type, scores and the increase under each ablation."""
    wide = table.pivot_table(index=["block", "head", "part"], columns="mode", values="increase",
                             dropna=False).reset_index()
    wide = wide.dropna(subset=[m.value for m in Mode if m.value in wide], how="all")
    wide.columns = [f"knockout_{c}" if c in {m.value for m in Mode} else c for c in wide.columns]
    if heads is not None and not heads.empty:
        typed = head_types(heads)
        keep = ["block", "head", "type", "type_score", *(c for c in TYPES.values() if c in typed), "max_weight"]
        wide = wide.merge(typed[[c for c in keep if c in typed]].astype({"head": "Int64"}),
                          on=["block", "head"], how="left")
    order = {Part.HEAD.value: 0, Part.ATTN.value: 1, Part.MLP.value: 2}
    return wide.sort_values(["block", "part", "head"], key=lambda s: s.map(order) if s.name == "part" else s) \
        .reset_index(drop=True)


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
