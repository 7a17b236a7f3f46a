"""The speed options change how a run computes, never what: the optimizer's foreach path gives the for-loop's
exact numbers, and every option on together lands within 0.02 of the plain path's validation loss."""
import pytest
import torch

from lm.model.data import prepare
from lm.run import train
from lm.run.module import LitGPT
from lm.settings import config
from lm.settings.config import ConfigError
from lm.tools import bench
from lm.tracking.store import Store

SMALL = ["eval.val_batches=4", "eval.val_batch_size=32", "eval.head_windows=8", "sample.length=20",
         "runtime.progress=false", "tracking.experiment=speed"]


def _trained(impl: str, steps: int = 5) -> list[torch.Tensor]:
    torch.manual_seed(0)
    module = LitGPT({}, {"lr": 0.003})
    module.use(impl)
    opt = module.configure_optimizers()
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        x = torch.randint(0, 65, (8, 64), generator=g)
        _, loss = module.model(x, x.roll(-1, 1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in module.parameters()]


def test_foreach_adam_gives_the_for_loops_exact_numbers():
    assert all(torch.equal(a, b) for a, b in zip(_trained("loop"), _trained("foreach")))


def test_an_unknown_optimizer_impl_is_one_config_error():
    with pytest.raises(ConfigError, match="runtime.optimizer_impl='quick' must be foreach, fused or loop"):
        config.load(["runtime.optimizer_impl=quick"])


def test_compiling_keeps_the_checkpoint_keys():
    module = LitGPT({}, {})
    keys = set(module.state_dict())
    module.use("foreach", compile=True)
    assert set(module.state_dict()) == keys and module.compiled is not None


def test_every_speed_option_lands_within_0_02_of_the_plain_path(store):
    """300 steps from the same seed and batches, through the harness's own code: the plain path (torch's default
    for-loop Adam, no compilation, one thread) against every option of `make bench` (compiled step, fused Adam,
    the batch split between two threads)."""
    losses = {}
    plain = ["runtime.optimizer_impl=loop", "runtime.compile=false", "runtime.threads=1"]
    for name, options in {"plain": plain, "fast": [*bench.EVERY, "runtime.threads=2"]}.items():  # 2 shards
        cfg = config.load(["train.steps=300", "eval.every=300", *SMALL, *options])
        s = Store()
        result = train.execute(cfg, prepare(cfg), s, s.create_run("speed", name, {}))
        assert result["status"] == "FINISHED", result
        losses[name] = result["val_loss"]
    assert losses["plain"] < 2.6                      # it learned: uniform guessing is ln 65 = 4.17
    print(f"val loss after 300 steps: {losses}")
    assert abs(losses["fast"] - losses["plain"]) <= 0.02, losses


def test_a_split_batch_gives_the_whole_batchs_loss_and_gradients():
    """Two shards on two threads, one with padding (targets of -1, as documents have): each shard's mean is
    weighted by its scored targets, so the sum is the whole batch's mean and so are the gradients."""
    torch.manual_seed(0)
    module = LitGPT({}, {})
    x = torch.randint(0, 65, (8, 64))
    y = x.roll(-1, 1)
    y[5:, 40:] = -1
    _, loss = module.model(x, y)
    loss.backward()
    want = [p.grad.clone() for p in module.parameters()]
    threads = torch.get_num_threads()
    module.use("foreach", split_batch=2)
    module.on_train_start()
    try:
        assert torch.get_num_threads() == 1
        split = module._split_step(x, y)
    finally:
        module.on_train_end()
    assert torch.get_num_threads() == threads
    assert torch.allclose(split, loss, atol=1e-6)
    assert all(torch.allclose(p.grad, w, atol=1e-6) for p, w in zip(module.parameters(), want))
