"""Devices without a GPU: which accelerator and precision a run gets, which GPU each worker pins, and the gpu and
large profiles composed, built and stepped on the CPU."""
import os
from dataclasses import asdict

import pytest
import torch

from lm.commands import suite as suite_command
from lm.model.model import n_params
from lm.run import devices
from lm.run.module import LitGPT
from lm.settings import config
from lm.settings.config import ConfigError
from lm.suite import load_suite_config, plan
from lm.suite.launchers import local


# --- placement: one run per GPU ---------------------------------------------------------------------------
def test_each_worker_gets_a_gpu_of_its_own_while_there_are_enough():
    gpus = ["0", "1", "2", "3"]
    assert [devices.gpus_for_slot(slot, gpus) for slot in range(1, 6)] == [["0"], ["1"], ["2"], ["3"], ["0"]]
    assert devices.gpus_for_slot(0, gpus) == []      # not a pool worker: a submitit job, or the suite itself
    assert devices.gpus_for_slot(1, []) == []
    assert devices.gpus_for_slot(2, ["GPU-a", "GPU-b", "GPU-c", "GPU-d"], per_worker=2) == ["GPU-c", "GPU-d"]


@pytest.fixture
def machine(monkeypatch):
    """A 16-core machine whose GPUs the test decides, with no GPU plan in the environment yet."""
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))   # the cores this process may use
    for key in (devices.WORKER_GPUS, "CUDA_VISIBLE_DEVICES"):
        monkeypatch.setenv(key, "")
        monkeypatch.delenv(key)

    def gpus(count: int, visible: str | None = None):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
        if visible is not None:
            monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    return gpus


def test_the_suite_runs_one_run_per_gpu(machine):
    machine(4)
    assert devices.visible_gpus() == ["0", "1", "2", "3"]
    assert devices.share_gpus() == ["0", "1", "2", "3"]
    assert os.environ[devices.WORKER_GPUS] == "0,1,2,3"          # what the workers pin from
    assert local.plan_workers(10, gpus=4) == (4, 1)          # 4 GPUs: 4 workers
    assert local.plan_workers(2, gpus=4) == (2, 1)           # fewer runs than GPUs
    assert local.plan_workers(10, workers=8, gpus=4) == (8, 1)   # asked for: two runs a GPU


def test_gpus_already_narrowed_by_the_user_are_the_ones_shared_out(machine):
    machine(2, visible="2,3")
    assert devices.visible_gpus() == ["2", "3"]
    assert devices.share_gpus() == ["2", "3"] and os.environ[devices.WORKER_GPUS] == "2,3"


def test_without_gpus_or_for_cpu_runs_the_plan_is_the_cpus(machine):
    machine(0)
    assert devices.share_gpus() == [] and devices.WORKER_GPUS not in os.environ
    assert local.plan_workers(10) == (10, 1)                 # one single-threaded run per core, up to 16
    assert local.plan_workers(40) == (16, 1)
    assert local.plan_workers(10, threads=4) == (4, 4)
    machine(4)
    assert devices.share_gpus("cpu") == [] and devices.WORKER_GPUS not in os.environ


def test_a_worker_pins_its_gpu_before_cuda_starts(machine, monkeypatch):
    monkeypatch.setenv(devices.WORKER_GPUS, "2,3")
    assert devices.pin_gpu(2) == ["3"] and os.environ["CUDA_VISIBLE_DEVICES"] == "3"
    monkeypatch.setenv(devices.WORKER_GPUS, "")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    assert devices.pin_gpu(1) == [] and os.environ["CUDA_VISIBLE_DEVICES"] == "7"   # no plan: left alone


def test_the_suite_plans_its_local_pool_with_the_gpus(machine, monkeypatch, tmp_path):
    """The suite builds its local pool with the GPUs it shares out, so a GPU machine gets one worker per GPU."""
    machine(3)
    seen = {}

    def pool(self, workers, threads, lock):
        seen.update(workers=workers, threads=threads)
        raise KeyboardInterrupt   # stop before any run starts

    monkeypatch.setattr(local.LocalPool, "__init__", pool)
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(KeyboardInterrupt):
        suite_command.main(["quick=true", "ablations=[heads]"])
    assert seen["workers"] == 3   # (threads: the suite's own rule, one per run unless threads= says otherwise)


# --- device and precision -----------------------------------------------------------------------------------
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU machine's answers")
def test_device_selection_on_a_machine_without_gpu():
    assert devices.select() == ("cpu", "32-true")
    assert devices.select("cpu", "bf16-mixed") == ("cpu", "bf16-mixed")
    with pytest.raises(ConfigError, match=r"runtime.accelerator=cuda, but this machine has no CUDA GPU"):
        devices.select("cuda")
    with pytest.raises(ConfigError, match="must be auto, cpu, cuda or mps"):
        devices.select("tpu")


def test_cuda_trains_in_bf16_autocast_with_tf32(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)
    assert devices.select() == ("cuda", "bf16-mixed")
    assert devices.select("gpu", "32-true") == ("cuda", "32-true")        # asked for: kept
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: False)
    assert devices.select() == ("cuda", "16-mixed")                        # before Ampere: fp16 with loss scaling
    before = torch.get_float32_matmul_precision()
    try:
        devices.prepare("cuda")
        assert torch.get_float32_matmul_precision() == "high"              # TF32 matmuls
    finally:
        torch.set_float32_matmul_precision(before)


# --- the profiles ------------------------------------------------------------------------------------------
PROFILES = {
    "gpu": (dict(block_size=128, n_embd=192, n_head=6, n_layer=4, dropout=0.1, activation="gelu", bias=True,
                 norm="layer"),
            dict(steps=3000, batch_size=64, lr=1e-3, optimizer="adamw", schedule="constant"), 300, 1_827_137),
    "large": (dict(block_size=256, n_embd=384, n_head=6, n_layer=6, dropout=0.2, activation="gelu", bias=False,
                   norm="layer"),
              dict(steps=5000, batch_size=64, lr=1e-3, betas=[0.9, 0.99], optimizer="adamw", weight_decay=0.1,
                   schedule="cosine", warmup_steps=100, min_lr=1e-4, grad_clip=1.0), 250, 10_770_048),
}


@pytest.mark.parametrize("name", PROFILES)
def test_a_profile_composes_builds_and_trains_on_the_cpu(name):
    model, train, every, count = PROFILES[name]
    cfg = config.load([f"profile={name}"])
    assert {k: getattr(cfg.model, k) for k in model} == model
    assert {k: getattr(cfg.train, k) for k in train} == train
    assert cfg.eval.every == every and cfg.data.corpus == "shakespeare"
    module = LitGPT(asdict(cfg.model), asdict(cfg.train))
    assert sum(p.numel() for p in module.parameters()) == n_params(cfg.model) == count
    # Two steps of the profile's own optimiser and schedule on a tiny batch.
    opt = module.configure_optimizers()
    opt, sched = (opt["optimizer"], opt["lr_scheduler"]["scheduler"]) if isinstance(opt, dict) else (opt, None)
    assert type(opt).__name__ == "AdamW"
    torch.manual_seed(0)
    x = torch.randint(0, 65, (2, cfg.model.block_size))
    y = torch.roll(x, -1, 1)
    before = module.model.lm_head.weight.detach().clone() if hasattr(module.model, "lm_head") else None
    losses = []
    module.train()
    for _ in range(2):
        _, loss = module.model(x, y)
        opt.zero_grad()
        loss.backward()
        if cfg.train.grad_clip:
            torch.nn.utils.clip_grad_norm_(module.parameters(), cfg.train.grad_clip)
        opt.step()
        if sched:
            sched.step()
        losses.append(loss.item())
    assert all(l == l and l < 6 for l in losses)
    if before is not None:
        assert not torch.equal(before, module.model.lm_head.weight)


def test_the_large_profile_warms_up_then_decays_to_min_lr():
    t = config.load(["profile=large"]).train
    assert t.lr_factor(0) == pytest.approx(0.01) and t.lr_factor(99) == pytest.approx(1.0)
    assert t.lr_factor(100) == pytest.approx(1.0) and t.lr_factor(5000) == pytest.approx(0.1)   # 1e-4 / 1e-3


def test_a_profile_goes_under_every_exercise_of_the_suite():
    s = load_suite_config(["quick=true", "ablations=[heads]", "profile=gpu"])
    jobs = plan(s).jobs
    # The exercise's variants go on top; its base variant (h4, no override) takes the profile's 6 heads.
    assert {j.spec.variant: j.cfg.model.n_head for j in jobs} == {"h1": 1, "h2": 2, "h4": 6, "h8": 8}
    assert {(j.cfg.model.n_embd, j.cfg.model.block_size, j.cfg.train.optimizer) for j in jobs} == {(192, 128, "adamw")}
