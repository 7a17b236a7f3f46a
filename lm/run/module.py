"""The Lightning side of a run: the optimiser, the training step and validation on fixed windows."""
from concurrent.futures import ThreadPoolExecutor

import pytorch_lightning as pl
import torch
import torch._functorch.config  # private: tests/config/test_private_internals.py

from lm.model.model import GPT, GPTConfig, honest_loss, token_losses
from lm import faults
from lm.settings.schema import TrainConfig  # noqa: F401  (a run's settings, checked before torch loads)


class LitGPT(pl.LightningModule):
    def __init__(self, model: dict, train: dict, honest_windows: int = 0):
        super().__init__()
        self.save_hyperparameters(logger=False)  # the run logs its whole config itself
        self.model = GPT(GPTConfig(**model))
        self.cfg = TrainConfig(**train)
        self.honest_windows = honest_windows
        self.train_windows: list = []   # fixed training batches scored at every validation (eval.train_curve)
        self.val_metrics: dict[str, float] = {}
        self.optimizer_impl = "foreach"
        self.__dict__["compiled"] = None  # not a submodule: checkpoints keep the same keys either way
        self.shards, self._pool, self._threads, self._first = 1, None, 0, True
        # The step is written out in training_step (Lightning's manual optimisation), in the order Lightning's
        # automatic one takes (forward, zero_grad, backward, clipping, step, schedule), to the same floats (four
        # configs, 60 steps, compared to the bit): the automatic one wraps it in a closure and more hooks, about
        # 2 % of the base model's step on this machine (docs/notebook.md).
        self.automatic_optimization = False

    def __setattr__(self, name, value):
        # Lightning sets _current_fx_name, a plain string, around every hook it calls, a dozen a step: nn.Module's
        # __setattr__ checks each value against parameters, buffers and submodules first (88,000 calls in 2,000
        # steps, cProfile). Every other attribute takes nn.Module's path.
        if name == "_current_fx_name":
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def use(self, optimizer_impl: str = "foreach", compile: bool = False, split_batch: int = 1) -> None:
        """How the training steps run, not what they compute (up to round-off): see RuntimeConfig. A compiled
        model serves the training step only; validation and everything after training run the model itself.
        split_batch > 1: each step's batch is cut into that many shards, whose forward and backward passes run
        side by side on their own threads, one torch thread each, adding into the same gradients. Not with dropout,
        whose shards would draw from one random generator in whatever order they ran. A compiled step's kernels
        hold Python's lock, so its shards mostly take turns: `make bench` shows both."""
        self.optimizer_impl = optimizer_impl
        self.shards = max(1, split_batch) if not self.model.config.dropout else 1
        if compile:
            # The backward recomputes ReLU's mask from the saved output rather than saving it as booleans, which
            # inductor's CPU code writes slowly: 12.7 ms a call here for the MLP's, against 0.7 ms for eager's.
            torch._functorch.config.ban_recompute_materialized_backward = False
        self.__dict__["compiled"] = torch.compile(self.model) if compile else None

    def on_train_start(self):
        if self.shards > 1:
            self._pool, self._threads, self._first = ThreadPoolExecutor(self.shards - 1), torch.get_num_threads(), True
            torch.set_num_threads(1)  # threads that start later take this too

    def on_train_end(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
            torch.set_num_threads(self._threads)

    def on_validation_start(self):
        if self._pool is not None:
            torch.set_num_threads(self._threads)

    def on_validation_end(self):
        if self._pool is not None:
            torch.set_num_threads(1)

    def _split_step(self, x, y):
        """Zeroes the gradients, then runs every shard's forward and backward, the first on this thread: each
        shard's mean loss is weighted by its share of the batch's scored targets, so the gradients add up to
        those of the whole batch's mean. Returns that mean."""
        forward = self.compiled if self.compiled is not None else self.model
        counts = [(t >= 0).sum() for t in y.chunk(self.shards)]
        total = sum(counts)

        def shard(x, y, count):
            _, loss = forward(x, y)
            loss = loss * (count / total)
            loss.backward()
            return loss.detach()

        self.zero_grad(set_to_none=True)
        parts = list(zip(x.chunk(self.shards), y.chunk(self.shards), counts))
        first = shard(*parts[0]) if self._first else None  # alone the first time: any compilation happens once
        futures = [self._pool.submit(shard, *part) for part in parts[1:]]
        self._first = False
        return sum([first if first is not None else shard(*parts[0]), *(f.result() for f in futures)])

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        if self._pool is not None:
            loss = self._split_step(*batch)  # zeroes the gradients and runs the shards' backward passes itself
        else:
            _, loss = (self.compiled if self.compiled is not None else self.model)(*batch)
            opt.zero_grad(set_to_none=True)
            self.manual_backward(loss)
        # Only for the bar, which refreshes every 25 steps: a log call every step is Lightning bookkeeping the
        # step pays for. The per-step curve is logged in bulk, by the run's StepRecorder.
        if self.global_step % 25 == 0:
            self.log("train_loss", loss, prog_bar=True, logger=False)
        opt.step()  # on_before_optimizer_step clips, after a mixed-precision scaler has unscaled the gradients
        scheduler = self.lr_schedulers()
        if scheduler is not None:
            scheduler.step()
        return loss

    def on_before_optimizer_step(self, optimizer):
        if self.cfg.grad_clip:
            self.clip_gradients(optimizer, gradient_clip_val=self.cfg.grad_clip, gradient_clip_algorithm="norm")

    def on_validation_epoch_start(self):
        T = self.model.config.block_size
        self._sum = torch.zeros(T, dtype=torch.float64, device=self.device)
        self._count = torch.zeros(T, dtype=torch.float64, device=self.device)
        self._honest: list[torch.Tensor] = []

    def validation_step(self, batch, batch_idx):
        faults.point("validation")
        x, y = batch
        losses = token_losses(self.model, x, y)
        self._sum += losses.sum(0)
        self._count += (y >= 0).sum(0)
        if sum(len(h) for h in self._honest) < self.honest_windows:
            self._honest.append(batch)

    def on_validation_epoch_end(self):
        # Kept for the run's recorder, which logs them at the step they belong to.
        self.val_metrics = {"val_loss": (self._sum.sum() / self._count.sum()).item()}
        if self.honest_windows:
            x, y = (torch.cat(t)[: self.honest_windows] for t in zip(*self._honest))
            self.val_metrics["honest_val_loss"] = honest_loss(self.model, x, y)
        if self.train_windows:
            with torch.no_grad():
                losses = [token_losses(self.model, x.to(self.device), y.to(self.device)) for x, y in self.train_windows]
            self.val_metrics["train_eval_loss"] = float(torch.cat([t.flatten() for t in losses]).double().mean())
        self.log("val_loss", self.val_metrics["val_loss"], prog_bar=True, logger=False)

    def configure_optimizers(self):
        c = self.cfg
        opt_class = torch.optim.AdamW if c.optimizer == "adamw" else torch.optim.Adam
        impl = {"foreach": {"foreach": True}, "fused": {"fused": True}, "loop": {"foreach": False}}[self.optimizer_impl]
        opt = opt_class(self.parameters(), lr=c.lr, betas=tuple(c.betas), weight_decay=c.weight_decay, **impl)
        if c.schedule == "constant" and not c.warmup_steps:
            return opt
        sched = torch.optim.lr_scheduler.LambdaLR(opt, c.lr_factor)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
