"""What a run records while it trains: the loss of every step, the training time, and divergence."""
import math
import time

import pytorch_lightning as pl
import torch

from lm import faults
from lm.tracking import Store


class Diverged(RuntimeError):
    pass


class StepRecorder(pl.Callback):
    """Keeps every step's training loss on the device and sends them to MLflow in one call every `every`
    steps: a per-step `.item()` or a database write per step would cost more than the step itself.
    Also times training apart from validation, and stops a run whose loss is no longer a number."""

    def __init__(self, store: Store, run_id: str, every: int, logged_until: int = -1):
        self.store, self.run_id, self.every = store, run_id, every
        self.logged_until = logged_until   # steps up to here were logged before a resume
        self.losses: list[torch.Tensor] = []
        self.first_step = 0
        self.train_time = 0.0              # seconds of training in this session, validation excluded
        self.steps_timed = 0
        self._t = None

    def on_train_start(self, trainer, pl_module):
        self.first_step = trainer.global_step
        self._t = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        faults.point("step")
        self.losses.append(outputs["loss"].detach())
        self.steps_timed += 1
        if len(self.losses) >= self.every:
            self.flush(trainer)

    def on_validation_start(self, trainer, pl_module):
        if self._t is not None:
            self.train_time += time.perf_counter() - self._t
            self._t = None
        self.flush(trainer)

    def on_validation_end(self, trainer, pl_module):
        if trainer.global_step > self.logged_until:
            self.store.log_metrics(self.run_id, {**pl_module.val_metrics, "train_time_s": self.train_time},
                                   trainer.global_step)
        if not math.isfinite(pl_module.val_metrics["val_loss"]):
            raise Diverged(f"validation loss became {pl_module.val_metrics['val_loss']} at step {trainer.global_step}")
        self._t = time.perf_counter()

    def on_train_end(self, trainer, pl_module):
        if self._t is not None:
            self.train_time += time.perf_counter() - self._t
            self._t = None
        self.flush(trainer)

    def flush(self, trainer) -> None:
        if not self.losses:
            return
        values = torch.stack(self.losses).float().cpu().tolist()
        start = trainer.global_step - len(values) + 1
        self.losses = []
        bad = next((i for i, v in enumerate(values) if not math.isfinite(v)), None)
        keep = [(start + i, v) for i, v in enumerate(values[:bad]) if start + i > self.logged_until]
        if keep:
            self.store.log_series(self.run_id, "train_loss", [v for _, v in keep], keep[0][0])
        if bad is not None:
            raise Diverged(f"loss became {'NaN' if math.isnan(values[bad]) else 'inf'} at step {start + bad}")

    @property
    def ms_per_step(self) -> float:
        return 1000 * self.train_time / max(1, self.steps_timed)
