"""The software and machine a run ran on, as tags: what besides its config can change a run's numbers or speed.
No torch: the report reads COMPARED; the run, which has torch, names its device and threads (lm/run/devices.py)."""
import hashlib
import platform
import sys
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from lm.tracking.store import git_commit

PACKAGES = {"torch": "torch", "lightning": "pytorch-lightning", "mlflow": "mlflow", "numpy": "numpy"}  # tag: package
LOCK = Path(__file__).resolve().parents[2] / "requirements.lock"  # every package's version, pinned with hashes
# The tags that should not differ between runs that are compared: software, machine, threads, code. The thread
# count leaves a run's numbers as they are (README: parallel runs) but not its speed, which some claims read.
COMPARED = ("env.python", *(f"env.{p}" for p in PACKAGES), "env.lock", "env.device", "env.threads",
            "env.git_commit", "env.git_dirty")


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "absent"


@lru_cache(maxsize=1)
def lock_hash() -> str:
    """The lock file's SHA-256, its first 12 hex digits: runs with the same one were installed from the same pins
    (where the environment was built by `make`); "absent" where the project has no lock file beside it."""
    try:
        return hashlib.sha256(LOCK.read_bytes()).hexdigest()[:12]
    except OSError:
        return "absent"


def tags(device: str, threads: int) -> dict[str, str]:
    """env.* tags: Python, package versions, the lock file's hash, the device (devices.device_name), torch's thread
    count and the git state."""
    commit = git_commit()
    return {"env.python": platform.python_version(), "env.platform": f"{sys.platform} {platform.machine()}",
            **{f"env.{tag}": _version(p) for tag, p in PACKAGES.items()}, "env.lock": lock_hash(),
            "env.device": device, "env.threads": str(threads),
            "env.git_commit": commit.removesuffix("-dirty"), "env.git_dirty": str(commit.endswith("-dirty")).lower()}
