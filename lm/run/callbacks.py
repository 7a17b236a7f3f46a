"""The callbacks of a run's training: what it records (the loss of every step, the training time, divergence), how
it stops on a signal, its checkpoint written atomically, and its progress bar."""
import functools
import math
import os
import signal
import time

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import ModelCheckpoint, TQDMProgressBar
from pytorch_lightning.loggers import MLFlowLogger

from lm import faults
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


class StopOnSignal(pl.Callback):
    """Ctrl-C (also how the suite stops a SLURM job), SIGTERM or SIGUSR2 (the warning submitit asks SLURM for, 90 s
    before the time limit): the step and its logging finish, a checkpoint is written, and the run stops. In a SLURM
    job this replaces submitit's own SIGUSR2 handler, which would requeue the job or fail the run."""

    # A Ctrl-C at a terminal reaches the run and its suite at once, and the suite passes its own on to the runs (a
    # `kill -INT` to the suite alone reaches only the suite): a second signal this soon after the first is that
    # same Ctrl-C, not a second press asking to stop now.
    SAME_PRESS_S = 2.0
    early: str | None = None   # a signal a suite's worker got before any run was under way (remember)

    def __init__(self):
        self.signal, self._at = StopOnSignal.early, time.monotonic()

    @staticmethod
    def remember(signum, frame) -> None:
        """A worker's handler between runs: the signal is kept, and the next run stops at its first step."""
        StopOnSignal.early = signal.Signals(signum).name

    def __enter__(self):
        self._old = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR2)}
        return self

    def __exit__(self, *exc):
        for s, h in self._old.items():
            signal.signal(s, h)

    def _handle(self, signum, frame):
        if self.signal is None:
            self.signal, self._at = signal.Signals(signum).name, time.monotonic()
        elif time.monotonic() - self._at > self.SAME_PRESS_S:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt

    def on_train_batch_end(self, trainer, *_):
        if self.signal:
            trainer.should_stop = True
            if trainer.global_step % trainer.val_check_batch:  # Lightning would validate here, off the schedule
                trainer.limit_val_batches = 0

    def on_validation_end(self, trainer, *_):  # a signal during validation: no step after it
        if self.signal:
            trainer.should_stop = True


class AtomicCheckpoint(ModelCheckpoint):
    """last.ckpt at each validation, put in place by one rename in its own folder: a kill at any moment leaves the
    old checkpoint or the new one, never part of one (Lightning's own write goes through a temporary file that
    may be on another disk, and a move across disks is a copy)."""

    def on_validation_end(self, trainer, pl_module):
        # Lightning writes last.ckpt only after a top-k save, so with save_top_k=0 only when training ends: a run
        # killed at step 2,900 of 3,000 would start again from step 0.
        self._write_last(trainer)

    def on_train_end(self, trainer, pl_module):
        # Training's end, the last step's or a stop's, which no validation follows: a run killed during its
        # end-of-run measurements, or stopped by a signal, resumes from here. (Lightning's own writes last.ckpt
        # only where no checkpoint was written before.)
        self._write_last(trainer)

    def _write_last(self, trainer) -> None:
        """last.ckpt at this step, unless it was written at this step already."""
        if not self._should_skip_saving_checkpoint(trainer):
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))

    @functools.cached_property
    def state_key(self) -> str:
        # Lightning names a profiler section with it for every hook of every step, and ModelCheckpoint's is a repr of
        # its settings, built each time; they do not change after __init__.
        return super().state_key

    def _save_checkpoint(self, trainer, filepath):
        part = f"{filepath}.part"
        super()._save_checkpoint(trainer, part)
        faults.point("checkpoint")
        os.replace(part, filepath)
        self._last_checkpoint_saved = filepath


class ProgressBar(TQDMProgressBar):
    """Lightning's bar over the run's steps (the data never ends an epoch), so it has a total and an ETA."""

    def __init__(self, name: str, **kw):
        super().__init__(**kw)
        self.name = name

    def on_train_epoch_start(self, trainer, *_):
        super().on_train_epoch_start(trainer)
        bar = self.train_progress_bar
        bar.reset(total=trainer.max_steps)
        bar.initial = bar.n = trainer.global_step
        bar.set_description(self.name)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        super().on_train_batch_end(trainer, pl_module, outputs, batch, trainer.global_step - 1)

    def get_metrics(self, trainer, pl_module):
        return {k: v for k, v in super().get_metrics(trainer, pl_module).items() if k != "v_num"}
