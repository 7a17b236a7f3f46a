"""`make bench ARGS="only=shared"` at quick size: each command alone and beside a busy core, as ratios; and the busy
process it starts never outlives it."""
import os
import re
import subprocess
import sys
import time

import pytest

from lm.tools import bench_shared
from tests.conftest import ROOT
from tests.speed.test_bench_process import Rows


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether the process has ended (or is a zombie, which takes no CPU) within the given seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def test_quick_shared_rows_time_each_command_alone_and_beside_a_busy_core(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    table = Rows()
    bench_shared.shared(table, str(tmp_path), quick=True, pairs=1)
    assert table.sections[0].startswith("a machine that is not idle: each command alone, then beside a nice-19")
    *rows, idle = table.rows
    assert [w.split(" (")[0] for w in rows] == ["make train", "make sample", "make ablations", "make report"]
    cores = len(os.sched_getaffinity(0))
    assert idle.startswith(rows[0]) and idle.endswith(f"idle: its default threads against {cores}")
    assert re.fullmatch(r"alone, at each: ratio [\d.]+ \(goal ≤ 1.05\), pairs [\d.]+–[\d.]+", table.rows[idle][1])
    for what in rows:
        note = table.rows[what][1]
        alone, busy = table.values[what]
        found = re.fullmatch(r"alone; beside a busy core: ratio ([\d.]+) \(goal ≤ 1.3\), pairs ([\d.]+)–([\d.]+)", note)
        assert found and alone > 0 and busy > 0, note
        # the ratio is the median of the pairs' (one pair here: its own), the seconds shown rounded to 0.1 s
        assert float(found[2]) <= float(found[1]) <= float(found[3])
        assert float(found[1]) == pytest.approx(busy / alone, rel=0.1 / min(alone, busy) + 0.01)


def test_the_busy_process_is_stopped_when_its_block_fails():
    with pytest.raises(RuntimeError), bench_shared.busy_core() as spinner:
        assert spinner.poll() is None and os.getpgid(spinner.pid) != os.getpgid(0)   # busy, in its own session
        raise RuntimeError("a timing failed")
    assert spinner.poll() is not None


def test_the_busy_process_ends_itself_when_the_bench_is_killed():
    code = ("import os\nfrom lm.tools.bench_shared import busy_core\nwith busy_core() as p:\n"
            "    print(p.pid, flush=True)\n    os.kill(os.getpid(), 9)\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == -9
    assert gone(int(p.stdout)), "the spinner outlived the bench's SIGKILL"
