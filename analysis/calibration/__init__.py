"""The claims table's error rate, measured through the table itself (`make calibrate`): every claim of the exercise
files set on its boundary, its numbers drawn as real runs vary, thousands of simulated stores judged by
analysis.verdicts.table at the first look and through `make decide`'s looks.

    spreads.py    how each number varies over seeds and windows (spreads.csv, each row's source), and the command that
                  measures it from a store
    boundary.py   each claim in its own copy of its variants, set on its boundary (or at a true effect)
    simulate.py   the studies: numbers drawn, the table built and extended, the false firm verdicts counted
    __main__.py   `make calibrate`: the rates, the control's, the single numbers' at their true value, the power

`make calibrate ARGS="record=true"` keeps its figures in measured.json, which the report's A/A line quotes.
"""
import json
from pathlib import Path

MEASURED = Path(__file__).with_name("measured.json")


def measured() -> dict | None:
    """The figures `make calibrate ARGS="record=true"` last kept; None if it never did."""
    return json.loads(MEASURED.read_text(encoding="utf-8")) if MEASURED.is_file() else None
