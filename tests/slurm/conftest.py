"""The SLURM tests run against a real scheduler on this machine (tests/slurm/cluster.sh starts a single-node one).
Where none answers they are skipped, in one line that says why; with TINYGPT_REQUIRE_SLURM=1 (CI, once the script
has started one) that is a failure instead."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def why_not() -> str | None:
    """None when a SLURM answers here with a node to run on; else why not, in a few words."""
    if not (shutil.which("sbatch") and shutil.which("sinfo")):
        return "SLURM is not installed (no sbatch on the PATH)"
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "SLURM's controller does not answer (sinfo timed out)"
    states = out.stdout.split()
    if out.returncode or not any(s.rstrip("*~#") in ("idle", "mix", "mixed", "alloc", "allocated") for s in states):
        return f"SLURM has no node up here (sinfo: {(out.stderr.strip() or ' '.join(states) or 'no nodes')[:120]})"
    return None


def pytest_collection_modifyitems(config, items):
    """Every test here is marked `slurm`; where no SLURM answers, each is skipped with one reason, which pytest's
    summary folds into one line (unless TINYGPT_REQUIRE_SLURM=1: then the `cluster` fixture fails them)."""
    here = [item for item in items if HERE in item.path.parents]
    for item in here:
        item.add_marker(pytest.mark.slurm)
    if here and (why := why_not()) and os.environ.get("TINYGPT_REQUIRE_SLURM") != "1":
        skip = pytest.mark.skip(reason=f"SLURM tests skipped: {why}; start one with tests/slurm/cluster.sh")
        for item in here:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cluster():
    """SLURM's version, once a SLURM answers; with TINYGPT_REQUIRE_SLURM=1 (CI), a SLURM that does not is a failure."""
    why = why_not()
    if why:
        pytest.fail(f"{why}; TINYGPT_REQUIRE_SLURM=1 requires the SLURM tests (tests/slurm/cluster.sh starts one)")
    return subprocess.run(["sinfo", "-V"], capture_output=True, text=True).stdout.split()[-1]
