"""The code's comments and docstrings say what is and why, not when it changed: no date, issue number or stop in a
.py file of lm/ or analysis/ (a figure worth keeping goes to docs/notebook.md, the history to git)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HISTORY = re.compile(r"20\d\d-\d\d-\d\d|\bissue \d+|\bstop \d+", re.IGNORECASE)


def history(folder: str) -> list[str]:
    """Each line of folder's .py files that names a date, an issue or a stop."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


@pytest.mark.parametrize("folder", ["lm", "analysis"])
def test_no_comment_names_a_date_an_issue_or_a_stop(folder):
    assert history(folder) == []


@pytest.mark.parametrize("line", ["# 0.3 s here (2026-12-04)", "# as issue 34 asked", "# Stop 12: the engine",
                                  "\"\"\"Fixed in ISSUE 7.\"\"\""])
def test_the_pattern_catches_each_kind_of_history(line):
    assert HISTORY.search(line)


@pytest.mark.parametrize("line", ["# ten times the loss of guessing", "step = 2026  # a seed", "# stops at step 20",
                                  "# the issue's tolerance"])
def test_the_pattern_leaves_what_is_not_history(line):
    assert not HISTORY.search(line)
