"""One run, start to finish: Lightning to train it, MLflow to keep it, its end-of-run measurements, and a twin's
results copied from its leader's run. Its command line, every check before any work, is lm/commands/train.py
(`make train`); a suite's worker calls execute() for each of its runs.
"""
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import asdict, fields
from pathlib import Path

import mlflow
import numpy as np
import pytorch_lightning as pl
import torch
from pytorch_lightning.plugins.environments import LightningEnvironment

from lm.measures import end_of_run, model_flavor, probes
from lm.measures.end_of_run import EndOfRun
from lm.model import checkpoint, threads
from lm.model.data import Corpus, held_out_windows, train_batch, val_batches
from lm.model.model import GPTConfig, n_params, train_flops
from lm.run import devices
from lm.run.callbacks import AtomicCheckpoint, Diverged, ProgressBar, RunLogger, StepRecorder, StopOnSignal
from lm.run.datamodule import CorpusDataModule
from lm.run.module import LitGPT
from lm.settings import config, measures
from lm.settings.config import RunConfig
from lm.tracking import environment, views
from lm.tracking.store import Store, duration, pointed_at
from lm.tracking.store_check import redact

# The final validation's loss on each window of the held-out text (lm/model/data.py held_out_windows), in order, as
# float32: the same windows for every run of a corpus and a context, so that runs pair window by window.
WINDOW_LOSSES = "val_window_losses.npy"
# The same windows' loss at each position (windows × positions, NaN past the last window's end), float32: the loss by
# position as a sample of the text, paired window by window.
POSITION_LOSSES = "val_position_losses.npy"
# The model's toggles, every field of its config but the vocabulary (the corpus decides that), also logged under
# these flat names so MLflow's compare view lines them up: a new toggle is a new field, and nothing here.
TOGGLES = tuple(f.name for f in fields(GPTConfig) if f.name != "vocab_size")


class Interrupted(Exception):
    pass


def quiet() -> None:
    """Lightning's banners: the run's own bar and summary say what matters."""
    for name in ("pytorch_lightning", "lightning.pytorch", "lightning_fabric"):
        logging.getLogger(name).setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message=".*LeafSpec.*")
    warnings.filterwarnings("ignore", message=".*does not have many workers.*")
    # With SLURM installed, Lightning advises `srun python ...` in every run; a run is one process on one device, on
    # a login node as in a job (where submitit starts it through srun), so the advice never applies. Python's -W or
    # PYTHONWARNINGS bring it back.
    if not sys.warnoptions:
        warnings.filterwarnings("ignore", message="The `srun` command is available")


def corpus_tags(cfg: RunConfig, corpus: Corpus) -> dict:
    """Which text the run read, what it could not measure on it (probes.not_applicable) and what it was told not to
    measure (measure.*=false), for the report."""
    tags = {"corpus": cfg.data.corpus, "corpus.sha256": cfg.data.sha256, "corpus.pinned": cfg.data.pinned}
    if not cfg.data.pinned:
        tags["corpus.file"] = Path(cfg.data.path).name
    skipped = probes.not_applicable(corpus, cfg.data)
    if skipped:
        tags["not_applicable"] = json.dumps(skipped, ensure_ascii=False)
    not_measured = measures.not_measured_tag(measures.switched_off(cfg.measure))
    if not_measured:
        tags[measures.TAG] = not_measured
    return tags


def params(cfg: RunConfig) -> dict:
    """Everything that defines the run; how it ran (threads, device, progress) goes in tags, which may change."""
    d = cfg.to_dict()
    d.pop("runtime")
    flat = config.flatten(d)
    flat.update({k: getattr(cfg.model, k) for k in TOGGLES})
    flat["config_hash"] = cfg.config_hash
    if flat.get("tracking.uri"):
        flat["tracking.uri"] = redact(flat["tracking.uri"])
    return flat


def execute(cfg: RunConfig, corpus: Corpus, store: Store, run_id: str, init_run: str | None = None,
            callbacks: Sequence[pl.Callback] = ()) -> dict:
    """Trains (or, with init_run, loads) the model inside an existing MLflow run, measures it, and ends the run
    FINISHED, FAILED (with the reason) or KILLED. Returns the summary. callbacks: Lightning callbacks of the
    caller's, handed to the Trainer beside the run's own (make bench's and make gpu-check's timers)."""
    quiet()
    # A split batch takes a shard a core; otherwise the model's size decides (lm/model/threads.py).
    threads.use(cfg.runtime.threads or (threads.cores() if cfg.runtime.split_batch else
                                        threads.automatic(train_flops(cfg.model, cfg.train.batch_size))), "train")
    ckpt_dir = store.checkpoint_dir / run_id
    store.mark_running(run_id)
    stop = StopOnSignal()
    try:
        # Lightning's logger points the whole process at the store; it is put back when the run ends.
        with stop, pointed_at(store.uri):
            result = _execute(cfg, corpus, store, run_id, init_run, ckpt_dir, stop, callbacks)
    except Interrupted as e:  # signal: which one stopped it (a suite stops on a Ctrl-C that its runs saw)
        store.end_run(run_id, "KILLED", str(e))
        return {"status": "KILLED", "reason": str(e), "signal": stop.signal}
    except KeyboardInterrupt:
        store.end_run(run_id, "KILLED", "interrupted")
        return {"status": "KILLED", "reason": "interrupted", "signal": stop.signal or "SIGINT"}
    except Diverged as e:
        store.end_run(run_id, "FAILED", str(e))
        store.client.set_tag(run_id, "diverged", "true")
        return {"status": "FAILED", "reason": str(e)}
    except Exception as e:
        store.end_run(run_id, "FAILED", f"{type(e).__name__}: {e}")
        raise
    store.end_run(run_id, "FINISHED")
    shutil.rmtree(ckpt_dir, ignore_errors=True)  # with any part-written file a kill left behind
    return {"status": "FINISHED", **result}


def _execute(cfg, corpus, store, run_id, init_run, ckpt_dir, stop, callbacks) -> dict:
    pl.seed_everything(cfg.seed, verbose=False)
    module = LitGPT(asdict(cfg.model), asdict(cfg.train), cfg.eval.honest_windows if cfg.eval.honest else 0)
    dm = CorpusDataModule(corpus, cfg.train.batch_size, cfg.model.block_size, cfg.seed,
                          cfg.eval.val_batches, cfg.eval.val_batch_size)
    if cfg.eval.train_curve:   # the same windows the end of the run scores (end_of_run.train_loss)
        module.train_windows = val_batches(corpus, cfg.eval.val_batches, cfg.eval.val_batch_size,
                                           cfg.model.block_size, split="train")
    logger = RunLogger(tracking_uri=store.uri, run_id=run_id)
    resume = ckpt_dir / "last.ckpt"
    resume = resume if resume.is_file() else None
    store.resume(run_id)  # a run trained again in place after a kill: nothing it logged is logged twice
    env = environment.tags(devices.device_name(cfg.runtime.accelerator), torch.get_num_threads())
    store.set_tags(run_id, {**{f"runtime.{k}": v for k, v in asdict(cfg.runtime).items()},
                            **corpus_tags(cfg, corpus), **env})
    logger.log_hyperparams(params(cfg))  # MLflow accepts a param logged again with the same value
    store.log_metrics(run_id, {"n_params": sum(p.numel() for p in module.parameters()),
                               "predicted_params": n_params(cfg.model),
                               # one layer's score array, batch × heads × context², predicted as lesson 000
                               # counts it (the forward pass's own is measured at the end: score_array_size)
                               "predicted_score_array_size":
                                   cfg.train.batch_size * cfg.model.n_head * cfg.model.block_size ** 2,
                               "flops_per_step": train_flops(cfg.model, cfg.train.batch_size),
                               **corpus.baselines()})
    # A write to the store takes milliseconds (10 for 50 points, 35 for 500), so the curve goes in batches of 500.
    recorder = StepRecorder(store, run_id, every=min(500, cfg.eval.every),
                            limit=10 * math.log(cfg.model.vocab_size))  # ten times the loss of guessing: blown up

    if init_run:
        module.model = load_from_run(store, init_run, cfg)
        store.client.set_tag(run_id, "init_from_run", init_run)
    else:
        if not store.logged(run_id, "val_loss", 0):  # the untrained model, as lesson 000 reports it (4.644 there)
            first = train_batch(corpus, cfg.train.batch_size, cfg.model.block_size, cfg.seed, 0)
            store.log_metrics(run_id, {"val_loss": probes.validation(module.model, dm.val)["val_loss"],
                                       # as lesson 002 reports it: one training batch ("loss at init 4.371")
                                       "loss_at_init": probes.batch_loss(module.model, first),
                                       **probes.attention_at_init(module.model, dm.val[0][0]),
                                       # the model's code checked as the lessons check theirs: lesson 000's
                                       # gradient check, lesson 001's worked blend
                                       "attention_gradcheck": probes.attention_gradcheck(),
                                       **probes.worked_blend()}, 0)
        # auto: CUDA, else MPS, else CPU; bf16 autocast and TF32 matmuls on CUDA
        accelerator, precision = devices.select(cfg.runtime.accelerator, cfg.runtime.precision)
        devices.prepare(accelerator, cfg.runtime.precision)
        module.use(cfg.runtime.optimizer_impl, cfg.runtime.compile,
                   torch.get_num_threads() if cfg.runtime.split_batch and accelerator == "cpu" else 1)
        trainer = pl.Trainer(
            max_steps=cfg.train.steps, val_check_interval=cfg.eval.every, check_val_every_n_epoch=None,
            accelerator=accelerator, devices=1, precision=precision, logger=logger,
            # One process, whether in a SLURM job or not: SLURMEnvironment's auto-requeue would save its own hpc
            # checkpoint in the working directory and `scontrol requeue` the job, beside our checkpoint and resume.
            plugins=[LightningEnvironment()],
            num_sanity_val_steps=0, enable_model_summary=False,  # clipping: LitGPT.on_before_optimizer_step
            log_every_n_steps=cfg.eval.every, enable_progress_bar=cfg.runtime.progress,
            callbacks=[recorder, stop, *callbacks,
                       AtomicCheckpoint(dirpath=ckpt_dir, save_top_k=0, save_last=True),
                       *([ProgressBar(cfg.tracking.run_name or "train", refresh_rate=25,
                                      process_position=cfg.runtime.progress_position)] if cfg.runtime.progress else [])],
        )
        trainer.fit(module, dm, ckpt_path=resume, weights_only=True)
        if stop.signal:  # its checkpoint written as training ended (AtomicCheckpoint.on_train_end)
            raise Interrupted(f"stopped by {stop.signal} at step {trainer.global_step}")
    return measure(cfg, corpus, store, run_id, module.model.cpu(), dm, recorder)


def copy(cfg: RunConfig, store: Store, source: str, run_id: str) -> dict:
    """A run whose twin, a finished run of the same config (in another exercise), has its numbers already: the
    same config and seed give the same numbers, so they are copied, not trained again. Its MLflow model is logged
    from the copied model.pt where its own `measure` asks for it."""
    store.mark_running(run_id)
    with pointed_at(store.uri):
        RunLogger(tracking_uri=store.uri, run_id=run_id).log_hyperparams(params(cfg))
    # Its own tags stay its own, the suite's word on its MLflow model among them (lm/suite/measuring.py).
    copied = store.copy_results(source, run_id, keep={"ablation", "variant", "seed", "config_hash", measures.MODEL_TAG})
    # a copy's own Duration is the seconds the copying took (MLflow's Duration is a run's end less its start, and
    # cannot be set): the Duration of the run that trained the numbers goes beside it, that of a copy's source's
    # source (copied with its tags) where the source is itself a copy
    tags = {views.COPIED_FROM: source}
    if views.SOURCE_DURATION not in copied.data.tags and copied.info.end_time and copied.info.start_time:
        tags[views.SOURCE_DURATION] = duration(copied.info.end_time - copied.info.start_time)
    store.set_tags(run_id, tags)
    if cfg.measure.mlflow_model:
        model_flavor.log_from_run(store, run_id)
    tag = store.client.get_run(run_id).data.tags.get(measures.TAG)
    retagged = measures.with_made(tag, "mlflow_model", cfg.measure.mlflow_model)
    if retagged:
        store.client.set_tag(run_id, measures.TAG, retagged)
    elif tag:
        store.client.delete_tag(run_id, measures.TAG)
    store.end_run(run_id, "FINISHED")
    return {"status": "FINISHED", "val_loss": store.client.get_run(run_id).data.metrics["val_loss"]}


def load_from_run(store: Store, run_id: str, cfg: RunConfig):
    with tempfile.TemporaryDirectory() as tmp:
        path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="model.pt", dst_path=tmp,
                                                   tracking_uri=store.uri)
        model, _ = checkpoint.load(Path(path), expect=cfg.model)
    return model


def measure(cfg: RunConfig, corpus: Corpus, store: Store, run_id: str, model, dm, recorder) -> dict:
    """The end of a run: the final validation, the checkpoint, and the measurements its `measure` section leaves on
    (lm/settings/measures.py's table, in its order), each logged once."""
    model.eval()
    # Every window of the held-out tenth, not the fixed sample the curve reads: the final val_loss and its error
    # over windows are the text's, and each window's loss is kept so that two runs pair window by window.
    val = probes.validation(model, held_out_windows(corpus, cfg.model.block_size, cfg.eval.final_windows))
    metrics = {k: v for k, v in val.items() if isinstance(v, float)}
    if cfg.eval.honest:
        metrics["honest_val_loss"] = probes.honest(model, dm.val, cfg.eval.honest_windows)
    if recorder.steps_timed:
        metrics["ms_per_step"] = recorder.ms_per_step
        metrics["tokens_per_s"] = cfg.train.batch_size * cfg.model.block_size * 1000 / recorder.ms_per_step
    off = measures.switched_off(cfg.measure)
    with tempfile.TemporaryDirectory() as tmp:
        end = EndOfRun(cfg, corpus, model, dm.val, store, run_id, Path(tmp), probes.not_applicable(corpus, cfg.data),
                       val["loss_by_position"], metrics, by_position_se=val["loss_by_position_se"])
        for m in measures.TABLE:
            if m.name not in off:
                end_of_run.MEASURE[m.name](end)
        checkpoint.save(end.folder / "model.pt", model, corpus.chars, corpus.bos)
        np.save(end.folder / WINDOW_LOSSES, val["window_losses"].float().numpy())
        np.save(end.folder / POSITION_LOSSES, val["position_losses"].numpy())
        store.log_metrics(run_id, end.metrics, cfg.train.steps)  # what validation logged at this step is not again
        store.set_tags(run_id, end.tags)
        store.client.log_artifacts(run_id, tmp)
    return {**end.metrics, "probe": end.probe, "sample": end.sample}


def summary(cfg: RunConfig, run_id: str, store: Store, result: dict) -> str:
    top = ",  ".join(f"{c!r} {p:.0%}" for c, p in result["probe"][:3]) if result["probe"] else \
        "not applicable to this corpus" if cfg.measure.probe else "not measured (measure.probe=false)"
    return "\n".join([
        f"run {run_id} in experiment '{cfg.tracking.experiment}' ({store.shown})",
        f"validation loss {result['val_loss']:.3f}  (perplexity {result['val_perplexity']:.2f}); "
        f"{result.get('ms_per_step', 0):.1f} ms/step, {result.get('tokens_per_s', 0):,.0f} tokens/s",
        f"after {cfg.data.probe!r}: {top}",
        f"sample: {result['sample'][:160]!r}" if result["sample"] is not None else
        "sample: not measured (measure.samples=false)",
        "compare runs with `make ui`",
    ])


