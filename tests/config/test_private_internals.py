"""The private internals of the libraries the code still uses, each pinned and each checked here to exist and to
behave as the code relies on: a new release that renames or changes one fails here, by name, rather than somewhere in
a run. Where each is used:

    Hydra        lm/suite/sweep.py              BasicSweeper.split_arguments: the grid of a sweep's overrides
    Lightning    lm/run/train.py                ModelCheckpoint's _save_checkpoint, _save_last_checkpoint,
                                                _should_skip_saving_checkpoint, _monitor_candidates, _last_checkpoint_saved
                 lm/run/module.py               _current_fx_name, which Lightning sets around every hook it calls
    submitit     lm/suite/launchers/submitit.py AutoExecutor._executor: its job_class, its update_parameters(visible_gpus);
                                                SlurmInfoWatcher's _registered, _finished, _info_dict, _num_calls,
                                                _last_status_check and is_done(mode="cache")
    lightning-   lm/process.py                  RequirementCache._check_requirement, which sets `available`, and
    utilities                                   the module's package_available, each looked up where it is used
    MLflow       lm/tracking/store.py           mlflow.tracking._tracking_service.utils._tracking_uri
                 lm/tracking/datasets.py        MetaDataset._to_mlflow_entity
    torch        lm/run/module.py               torch._functorch.config.ban_recompute_materialized_backward
                 lm/measures/probes.py          torch.utils._python_dispatch.TorchDispatchMode, aten._softmax, _safe_softmax
    Python       lm/suite/launchers/local.py    ProcessPoolExecutor's _broken and _processes (the interpreter's own:
                                                pyproject.toml asks for 3.11 or later, where these tests ran)
"""
import inspect
import math
import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from importlib.metadata import version

import mlflow
import pytest
import pytorch_lightning as pl
import submitit
import torch
import torch._functorch.config
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from mlflow.data.http_dataset_source import HTTPDatasetSource
from mlflow.data.meta_dataset import MetaDataset
from mlflow.tracking._tracking_service import utils as mlflow_uri
from pytorch_lightning.callbacks import ModelCheckpoint
from submitit.slurm.slurm import SlurmInfoWatcher, SlurmJob
from torch.utils._python_dispatch import TorchDispatchMode

from lm.run.module import LitGPT
from lm.run.callbacks import AtomicCheckpoint
from tests.config.test_lock import locked

# The distributions whose private internals the code uses (the module docstring says which): the lock pins each
# to the version these tests ran on.
PRIVATE = ["hydra-core", "pytorch-lightning", "lightning-utilities", "submitit", "mlflow", "torch"]


@pytest.mark.parametrize("name", PRIVATE)
def test_each_library_whose_internals_are_used_is_pinned_to_the_version_tested(name):
    pinned, hashes = locked()[name]
    assert version(name) == pinned and hashes


# --- lightning-utilities ------------------------------------------------------------------------------------------
def test_lightning_utilities_checks_go_through_the_two_names_lm_process_replaces_while_it_hides():
    """RequirementCache's truth comes from its _check_requirement, which sets `available`; package_available is
    looked up on the module by torchmetrics' import; and both answer again once shown."""
    from lightning_utilities.core import imports
    from lm import process

    cache = imports.RequirementCache("scipy")
    imports.RequirementCache._check_requirement(cache)
    assert cache.available is True
    process.hide_unused()
    try:
        assert not imports.RequirementCache("matplotlib") and not imports.package_available("scipy")
        assert imports.RequirementCache("numpy") and imports.package_available("numpy")
    finally:
        process.show_unused()
    assert imports.RequirementCache("matplotlib") and imports.package_available("scipy")


# --- Hydra --------------------------------------------------------------------------------------------------------
def test_hydras_basic_sweeper_splits_overrides_into_every_combination():
    parsed = OverridesParser.create().parse_overrides(["model.n_head=1,2", "model.n_layer=2,4", "train.steps=5"])
    assert BasicSweeper.split_arguments(parsed, None) == [[
        ["model.n_head=1", "model.n_layer=2", "train.steps=5"], ["model.n_head=1", "model.n_layer=4", "train.steps=5"],
        ["model.n_head=2", "model.n_layer=2", "train.steps=5"], ["model.n_head=2", "model.n_layer=4", "train.steps=5"]]]


# --- Lightning ----------------------------------------------------------------------------------------------------
class Recorded(pl.LightningModule):
    """A one-layer model that records the hook name Lightning sets while it runs its training step."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
        self.fx_names: list[str | None] = []

    def training_step(self, batch, _):
        self.fx_names.append(self._current_fx_name)
        return self.layer(batch).pow(2).mean()

    def validation_step(self, batch, _):
        return None

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class CountedCheckpoint(AtomicCheckpoint):
    """AtomicCheckpoint, recording at which step each of its writes happened and what it left behind."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.writes: list[tuple[int, list[str]]] = []

    def _save_checkpoint(self, trainer, filepath):
        super()._save_checkpoint(trainer, filepath)
        self.writes.append((trainer.global_step, sorted(os.listdir(os.path.dirname(filepath)))))


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ckpt")
    module, checkpoint = Recorded(), CountedCheckpoint(dirpath=folder, save_top_k=0, save_last=True)
    data = torch.utils.data.DataLoader(torch.randn(8, 2), batch_size=2)
    trainer = pl.Trainer(max_steps=4, val_check_interval=2, limit_val_batches=1, callbacks=[checkpoint], logger=False,
                         enable_progress_bar=False, enable_model_summary=False, accelerator="cpu", devices=1)
    trainer.fit(module, data, data)
    return module, checkpoint, folder


def test_lightning_sets_current_fx_name_around_the_training_step(fitted):
    module, _, _ = fitted
    assert module.fx_names == ["training_step"] * 4


def test_litgpt_keeps_current_fx_name_out_of_torchs_module_bookkeeping():
    """LightningModule declares the attribute itself; LitGPT's __setattr__ stores it plainly."""
    assert "_current_fx_name" in vars(pl.LightningModule())
    assert LitGPT.__setattr__ is not pl.LightningModule.__setattr__


def test_modelcheckpoints_private_methods_have_the_signatures_atomic_checkpoint_overrides_and_calls():
    params = {name: list(inspect.signature(getattr(ModelCheckpoint, name)).parameters)
              for name in ("_save_checkpoint", "_save_last_checkpoint", "_should_skip_saving_checkpoint",
                           "_monitor_candidates")}
    assert params == {"_save_checkpoint": ["self", "trainer", "filepath"],
                      "_save_last_checkpoint": ["self", "trainer", "monitor_candidates"],
                      "_should_skip_saving_checkpoint": ["self", "trainer"],
                      "_monitor_candidates": ["self", "trainer"]}


def test_atomic_checkpoint_writes_last_ckpt_at_each_validation_through_one_rename(fitted):
    """Lightning routes last.ckpt through _save_checkpoint, and records it in _last_checkpoint_saved: each write
    leaves last.ckpt alone in its folder, no .part, and the callback's record names last.ckpt itself."""
    _, checkpoint, folder = fitted
    steps = [step for step, _ in checkpoint.writes]
    assert steps[:2] == [2, 4]
    assert all(files == ["last.ckpt"] for _, files in checkpoint.writes)
    assert checkpoint._last_checkpoint_saved == str(folder / "last.ckpt")


# --- submitit -----------------------------------------------------------------------------------------------------
class MarkedJob(SlurmJob):
    """A SlurmJob the test can recognise."""


def test_submitits_inner_slurm_executor_makes_its_jobs_of_the_job_class_it_is_given(tmp_path, monkeypatch):
    """No cluster here: stand-ins for srun and sbatch that accept the job."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in {"sbatch": 'echo "Submitted batch job 4242"', "srun": "exit 0"}.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    executor = submitit.AutoExecutor(folder=tmp_path / "jobs", cluster="slurm")
    executor._executor.job_class = MarkedJob
    job = executor.submit(math.sqrt, 16.0)
    assert isinstance(job, MarkedJob) and job.job_id == "4242"


def test_submitits_inner_local_executor_shows_a_job_the_gpus_it_is_given(tmp_path):
    executor = submitit.AutoExecutor(folder=tmp_path, cluster="local")
    executor.update_parameters(timeout_min=1, gpus_per_node=1)   # submitit would show it GPU 0
    executor._executor.update_parameters(visible_gpus=(1,))
    assert executor.submit(os.getenv, "CUDA_VISIBLE_DEVICES").result() == "1"


def test_submitits_slurm_watcher_keeps_the_state_the_queue_watcher_writes():
    """lm/suite/launchers/submitit.py's QueueWatcher fills _info_dict from squeue and adds to _finished; is_done
    with mode="cache" then reads it without calling sacct."""
    assert isinstance(SlurmJob.watcher, SlurmInfoWatcher)
    watcher = SlurmInfoWatcher(delay_s=30)
    assert (watcher._registered, watcher._finished, watcher._info_dict, watcher._num_calls) == (set(), set(), {}, 0)
    watcher.register_job("12")
    watcher._info_dict["12"] = {"JobID": "12", "State": "RUNNING"}
    watcher._last_status_check = float("inf")
    assert not watcher.is_done("12", mode="cache")
    watcher._info_dict["12"]["State"] = "COMPLETED"
    assert watcher.is_done("12", mode="cache") and watcher._num_calls == 0
    watcher._finished |= {"12"}
    assert watcher._registered - watcher._finished == set()


# --- MLflow -------------------------------------------------------------------------------------------------------
def test_mlflows_tracking_uri_global_is_what_set_tracking_uri_sets(tmp_path, monkeypatch):
    monkeypatch.setattr(mlflow_uri, "_tracking_uri", None)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    mlflow.set_tracking_uri(uri)
    assert mlflow_uri._tracking_uri == uri
    mlflow.set_tracking_uri(None)
    assert mlflow_uri._tracking_uri is None


def test_a_meta_datasets_entity_has_the_name_digest_and_source_the_run_logs():
    source = HTTPDatasetSource("https://example.org/input.txt")
    entity = MetaDataset(source, name="shakespeare/train", digest="0123456789ab")._to_mlflow_entity()
    assert (entity.name, entity.digest, entity.source_type) == ("shakespeare/train", "0123456789ab", "http")
    assert "https://example.org/input.txt" in entity.source


# --- torch --------------------------------------------------------------------------------------------------------
def test_functorchs_recompute_switch_is_a_setting_of_its_config():
    before = torch._functorch.config.ban_recompute_materialized_backward
    assert isinstance(before, bool)
    with torch._functorch.config.patch(ban_recompute_materialized_backward=not before):
        assert torch._functorch.config.ban_recompute_materialized_backward is (not before)


def test_a_dispatch_mode_sees_the_softmax_ops_attention_runs():
    seen = []

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Ops():
        torch.softmax(torch.randn(2, 3), -1)
    assert torch.ops.aten._softmax.default in seen
    assert torch.ops.aten._safe_softmax.default.name() == "aten::_safe_softmax"


# --- Python -------------------------------------------------------------------------------------------------------
def test_a_process_pool_shows_its_process_and_says_when_it_died():
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        pid = pool.submit(os.getpid).result()
        (process,) = pool._processes.values()
        assert process.pid == pid and not pool._broken
        with pytest.raises(BrokenProcessPool):
            pool.submit(os._exit, 1).result()
        assert pool._broken
