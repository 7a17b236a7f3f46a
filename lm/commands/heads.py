"""`make heads`: knock-out of every head of finished runs, logged on each run and printed as a head table.

    python -m lm.commands.heads run=RUN_ID [force=true]          # `make heads RUN=...`: log it, print the head table
    python -m lm.commands.heads exercise=heads [quick=true]      # `make heads EXERCISE=...`: every finished run

The options: lm/spec/options.py's HeadsOptions. The knock-out itself is lm/knockout/measure.py; this command finds
the runs, loads their models and logs the tables.
"""
import sys

if __name__ == "__main__":  # the options checked before pandas, torch and MLflow load (lm/commands/cli.py)
    from lm import process
    from lm.commands import cli
    process.before_imports(cli.heads_front)

import tempfile
from dataclasses import fields
from pathlib import Path

import mlflow
import pandas as pd
import torch
from omegaconf import OmegaConf
from tqdm import tqdm

from lm.commands import cli
from lm.heads.measure import head_statistics
from lm.knockout.measure import knockout, windows
from lm.knockout.summary import head_table, headline
from lm.knockout.table import TYPES, WINDOWS, Mode, Part
from lm.measures import probes
from lm.model import checkpoint, threads
from lm.model.data import DataConfig, DataError, load_corpus, val_batches
from lm.model.model import train_flops
from lm.spec import exercises
from lm.spec.config import EvalConfig
from lm.spec.errors import ConfigError
from lm.tracking.store import Store, TrackingError, finished_runs


# --- `make heads`: knock-out for runs already in the store ------------------------------------------------
def _config(params: dict, cls, prefix: str):
    """One section of a run's config, rebuilt from its flat params (logged as strings) and checked by its schema."""
    known = {f.name for f in fields(cls)}
    raw = {k.removeprefix(prefix + "."): (None if v == "None" else v) for k, v in params.items()
           if k.startswith(prefix + ".") and k.removeprefix(prefix + ".") in known}
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(cls), raw))

def for_run(store, run_id: str, force: bool = False, asked_threads: int = 0
            ) -> tuple[pd.DataFrame, pd.DataFrame | None, bool]:
    """A finished run's knock-out table and head statistics; computed and logged to the run (metrics at its last
    step, knockout.csv, and attention_lines.json if it lacks one) unless it has them already, on asked_threads
    torch threads (0: as the run's training had by default). Returns whether it computed."""
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
        batch = int(params.get("train.batch_size", 32))
        threads.use(asked_threads or threads.automatic(train_flops(model.config, batch)), "heads")
        data, ev = _config(params, DataConfig, "data"), _config(params, EvalConfig, "eval")
        corpus = load_corpus(data)
        val = val_batches(corpus, ev.val_batches, ev.val_batch_size, model.config.block_size)
        if heads is None:
            heads = head_statistics(model, corpus, val, ev.head_windows, ev.head_skip)
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
    try:
        opts = cli.heads_options(sys.argv[1:] if argv is None else argv)
        chosen = exercises.select(opts.exercise) if opts.exercise else []
        store = Store(opts.tracking_uri or None)
        if opts.run:
            try:
                store.client.get_run(opts.run)
            except Exception:
                raise ConfigError(f"run={opts.run!r}: no such run in {store.shown}") from None
    except (ConfigError, TrackingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if opts.run:
        try:
            table, heads, computed = for_run(store, opts.run, opts.force, opts.threads)
        except (ValueError, DataError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        intact = float((table["loss"] - table["increase"]).iloc[0])
        print(f"run {opts.run}: validation loss {intact:.3f} on the first {WINDOWS} validation windows, and its "
              f"increase when each head, attention or MLP is knocked out (nats per character)")
        print(show(table, heads))
        if computed:
            print(f"{len(table)} knock-outs in {table.attrs['seconds']:.1f} s ({table.attrs['cpu_seconds']:.1f} s of "
                  f"CPU, {torch.get_num_threads()} thread{'s' * (torch.get_num_threads() > 1)})")
        return 0
    for ex in chosen:
        name = ("quick/" if opts.quick else "") + ex.name
        runs = finished_runs(store.client, name)
        if not runs:
            print(f"{name}: no finished runs")
            continue
        bar = tqdm(runs, desc=name, unit="run")
        for run in bar:
            label = run.info.run_name or run.info.run_id
            try:
                table, _, computed = for_run(store, run.info.run_id, opts.force, opts.threads)
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
    process.after_imports()  # the collector, off since before_imports
    process.finish(main())
