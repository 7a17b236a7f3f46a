"""A run's peak memory does not grow with its steps: twice the steps, the same peak (within noise)."""
import re
from pathlib import Path

from lm.model.data import prepare
from lm.run import train
from lm.settings import config
from lm.tracking.store import Store

SMALL = ["eval.every=30", "eval.val_batches=4", "eval.head_windows=8", "sample.length=50", "runtime.threads=1",
         "runtime.progress=false", "tracking.experiment=memory"]


def peak_rss_mb() -> float:
    return int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024


def test_twice_the_steps_keep_the_same_peak_memory(store):
    """Three runs in this process, the peak reset before each (Linux's clear_refs): a short one to load everything
    a run loads, then N steps and 2N steps, validating and checkpointing every 30."""
    peaks = {}
    for steps in (10, 60, 120):
        cfg = config.load([f"train.steps={steps}", *SMALL])
        s = Store()
        Path("/proc/self/clear_refs").write_text("5")
        assert train.execute(cfg, prepare(cfg), s, s.create_run("memory", str(steps), {}))["status"] == "FINISHED"
        peaks[steps] = peak_rss_mb()
    assert peaks[120] <= peaks[60] + max(30, 0.05 * peaks[60]), peaks
