"""Which device a run trains on, at what precision, and which GPU each of the suite's workers gets.

A run finds its accelerator itself (`runtime.accelerator=auto`): CUDA when a GPU is visible, else Apple's MPS, else
the CPU. On CUDA it trains in bf16 autocast (fp16 with loss scaling on GPUs older than Ampere) with TF32 matmuls.
With GPUs on the machine the suite runs one run per GPU side by side, each worker pinned to its own GPU.

torch is imported in the functions that ask it: the suite's command imports this module before its heavy imports,
and answers a mistake without them.
"""
import os
import platform
from functools import lru_cache
from pathlib import Path

from lm.settings.errors import ConfigError

# The suite hands its workers the GPUs to share out through the environment: a worker must pin its GPU (set
# CUDA_VISIBLE_DEVICES) before anything in it touches CUDA, so it cannot ask torch how many there are.
WORKER_GPUS = "TINYGPT_WORKER_GPUS"


def visible_gpus() -> list[str]:
    """The GPUs this process may use, by the names CUDA_VISIBLE_DEVICES gives them (an index or a UUID)."""
    import torch  # the suite's command imports this module before torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    names = [d.strip() for d in env.split(",") if d.strip()] if env is not None else [str(i) for i in range(count)]
    return names[:count]


def gpus_for_slot(slot: int, gpus: list[str], per_worker: int = 1) -> list[str]:
    """The GPUs of worker `slot` (1, 2, …): each its own while there are enough, then round again."""
    if not gpus or slot <= 0:
        return []
    groups = max(1, len(gpus) // per_worker)
    first = ((slot - 1) % groups) * per_worker
    return gpus[first:first + per_worker]


def share_gpus(accelerator: str = "auto") -> list[str]:
    """The GPUs the suite's workers share out, one each, told them through the environment (empty: none)."""
    gpus = visible_gpus() if accelerator in ("auto", "cuda", "gpu") else []
    if gpus:
        os.environ[WORKER_GPUS] = ",".join(gpus)
    else:
        os.environ.pop(WORKER_GPUS, None)
    return gpus


def pin_gpu(slot: int) -> list[str]:
    """In a worker, before CUDA starts: only this worker's GPU is visible. Does nothing without a GPU plan."""
    gpus = [g for g in os.environ.get(WORKER_GPUS, "").split(",") if g]
    mine = gpus_for_slot(slot, gpus)
    if mine:
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(mine)
    return mine


def select(accelerator: str = "auto", precision: str = "auto") -> tuple[str, str]:
    """(accelerator, precision) for Lightning, checked: a device asked for by name must be there."""
    import torch  # the suite's command imports this module before torch

    accelerator = {"gpu": "cuda"}.get(accelerator, accelerator)
    cuda = torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if accelerator == "auto":
        accelerator = "cuda" if cuda else "mps" if mps else "cpu"
    elif accelerator == "cuda" and not cuda:
        raise ConfigError(f"runtime.accelerator=cuda, but this machine has no CUDA GPU that torch {torch.__version__} "
                          f"can use; leave runtime.accelerator=auto to train on what there is")
    elif accelerator == "mps" and not mps:
        raise ConfigError("runtime.accelerator=mps, but Apple's MPS is not available here")
    elif accelerator not in ("cpu", "cuda", "mps"):
        raise ConfigError(f"runtime.accelerator={accelerator!r} must be auto, cpu, cuda or mps")
    if precision == "auto":
        if accelerator == "cuda":
            precision = "bf16-mixed" if torch.cuda.is_bf16_supported(including_emulation=False) else "16-mixed"
        else:
            precision = "32-true"
    return accelerator, precision


def prepare(accelerator: str, precision: str = "auto") -> None:
    """Process-wide settings for the device: TF32 matmuls on CUDA (Ampere and later use them; others ignore it),
    unless the run asked for `runtime.precision=32-true`, exact fp32 (make gpu-check's numerics compare it)."""
    if accelerator == "cuda":
        import torch  # the suite's command imports this module before torch

        torch.set_float32_matmul_precision("highest" if precision == "32-true" else "high")


def describe(accelerator: str, precision: str) -> str:
    if accelerator != "cuda":
        return f"{accelerator}, {precision}"
    import torch  # the suite's command imports this module before torch

    return f"cuda ({torch.cuda.get_device_name()}), {precision}, TF32 matmuls"


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's marketing name, from /proc/cpuinfo on Linux, else what the platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def device_name(accelerator: str) -> str:
    """The GPU's name when the run trains on CUDA (runtime.accelerator auto, cuda or gpu, and one is visible), else
    the CPU's: the run's env.device tag."""
    import torch  # the suite's command imports this module before torch

    if accelerator in ("auto", "cuda", "gpu") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.cuda.current_device())
    return cpu_model()
