"""What a run records while it trains: the loss of every step, the training time, and divergence."""
import math
import time

import pytorch_lightning as pl
import torch
from pytorch_lightning.loggers import MLFlowLogger

from lm.spec import faults
from lm.tracking.store import Store


class Diverged(RuntimeError):
    pass


class StepRecorder(pl.Callback):
    """Keeps every step's training loss on the device, in a buffer allocated once, and sends them to MLflow in one
    call at each validation (outside the timed steps), or once the buffer of `every` is full: a per-step `.item()`
    or a database write per step would cost more than the step itself, and a list of loss tensors kept alive among
    each step's activations fragments the heap (a run's peak memory then grows with its steps: up to 100 MB more at
    400 steps than at 200, measured).
    Also times training apart from validation, stops a run whose loss is no longer a number, or is above `limit`
    (train.py: ten times the loss of guessing uniformly, which only a run that blew up reaches), and leaves out the
    fixed sample's validation after the last step, where the run's final validation over every window takes over."""

    def __init__(self, store: Store, run_id: str, every: int, limit: float = math.inf):
        self.store, self.run_id, self.every, self.limit = store, run_id, every, limit
        self.losses: torch.Tensor | None = None
        self.held = 0                      # losses in the buffer, not yet sent
        self.train_time = 0.0              # seconds of training, validation excluded (kept across a resume)
        self.steps_timed = 0
        self._t = None

    def state_dict(self) -> dict:  # in the checkpoint, so a resumed run's ms_per_step covers all its steps
        return {"train_time": self.train_time, "steps_timed": self.steps_timed}

    def load_state_dict(self, state: dict) -> None:
        self.train_time, self.steps_timed = state["train_time"], state["steps_timed"]

    def on_train_start(self, trainer, pl_module):
        self._t = time.perf_counter()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        faults.point("step")
        loss = outputs["loss"].detach()
        if self.losses is None:
            self.losses = torch.empty(self.every, dtype=torch.float32, device=loss.device)
        if self.held == self.every:  # full, and no validation has come to send it (every < eval.every)
            self.flush(trainer)
        self.losses[self.held].copy_(loss)
        self.held += 1
        self.steps_timed += 1
        if trainer.global_step >= trainer.max_steps:
            # No validation after the last step: the run's own final one, over every window of the held-out text
            # (lm/run/train.py measure), takes its place, and the fixed sample's was computed only to be dropped
            # (a run's seconds outside its steps fell by 0.25 to 0.6 s at 2 to 4 blocks, one thread: docs/speed.md;
            # trainer.limit_val_batches is the Trainer's own setting).
            trainer.limit_val_batches = 0

    def on_validation_start(self, trainer, pl_module):
        if self._t is not None:
            self.train_time += time.perf_counter() - self._t
            self._t = None
        self.flush(trainer)

    def on_validation_end(self, trainer, pl_module):
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
        if trainer.global_step >= trainer.max_steps:  # the last step's time, which no validation logged
            self.store.log_metrics(self.run_id, {"train_time_s": self.train_time}, trainer.global_step)

    def flush(self, trainer) -> None:
        if not self.held:
            return
        values = self.losses[:self.held].cpu().tolist()
        start = trainer.global_step - len(values) + 1
        self.held = 0
        bad = next((i for i, v in enumerate(values) if not (math.isfinite(v) and v <= self.limit)), None)
        if values[:bad]:
            self.store.log_series(self.run_id, "train_loss", values[:bad], start)
        if bad is not None:
            v = values[bad]
            raise Diverged(f"loss became {'NaN' if math.isnan(v) else 'inf' if math.isinf(v) else f'{v:.4g}'} at step "
                           f"{start + bad}" + (f" (above {self.limit:.3g}: it blew up)" if math.isfinite(v) else ""))

    @property
    def ms_per_step(self) -> float:
        return 1000 * self.train_time / max(1, self.steps_timed)


class RunLogger(MLFlowLogger):
    """Lightning's MLflow logger, attached to a run the harness created. Lightning would mark the run FINISHED
    when fitting ends; here it ends only after the run's last measurement is logged."""

    def finalize(self, status: str = "success") -> None:
        pass
