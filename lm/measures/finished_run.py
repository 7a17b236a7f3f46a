"""A finished run's knock-out, measured after the fact from its stored model (`make heads`): its table and head
statistics, computed and logged to the run unless it has them already."""
import tempfile
from dataclasses import fields
from pathlib import Path

import mlflow
import pandas as pd
from omegaconf import OmegaConf

from lm.heads.measure import head_statistics
from lm.knockout.measure import knockout, windows
from lm.knockout.summary import headline
from lm.measures import probes
from lm.model import checkpoint, threads
from lm.model.data import DataConfig, load_corpus, val_batches
from lm.model.model import train_flops
from lm.settings.config import EvalConfig


def config_section(params: dict, cls, prefix: str):
    """One section of a run's config, rebuilt from its flat params (logged as strings) and checked by its schema."""
    known = {f.name for f in fields(cls)}
    raw = {k.removeprefix(prefix + "."): (None if v == "None" else v) for k, v in params.items()
           if k.startswith(prefix + ".") and k.removeprefix(prefix + ".") in known}
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(cls), raw))


def knock_out(store, run_id: str, force: bool = False, asked_threads: int = 0) \
        -> tuple[pd.DataFrame, pd.DataFrame | None, bool]:
    """A finished run's knock-out table and head statistics; computed and logged to the run (metrics at its last
    step, knockout.csv, and attention_lines.json if it lacks one) unless it has them already, on asked_threads torch
    threads (0: as the run's training had by default). Returns whether it computed. A run without a model is a
    ValueError; its corpus missing, a DataError."""
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
        data, ev = config_section(params, DataConfig, "data"), config_section(params, EvalConfig, "eval")
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
