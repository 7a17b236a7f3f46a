"""The notebook API, `from analysis import runs`, and `make export`, on the quick suite's store."""
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis import runs
from analysis.report import numbers
from analysis.verdicts import stats
from lm.settings.exercises import load_all

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def quick_env(quick_store, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("TINYGPT_STORE", str(quick_store))
    return quick_store


def test_the_notebook_example_of_the_docs_runs_as_shown(quick_env):
    page = ROOT / "docs" / "exercises.md"
    code = next(b for b in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
                if "from analysis import runs" in b)
    names = {}
    exec(compile(code, str(page), "exec"), names)
    df, heads, agg, curves = names["df"], names["heads"], names["agg"], names["curves"]
    # A row per run of the quick suite (one seed each, or an exercise's own count: the A/A's 3), each counted, with
    # its toggles as typed columns.
    assert len(df) == sum(len(ex.runs(1)) for ex in load_all().values())
    assert df["counted"].all() and set(df["status"]) == {"FINISHED"}
    assert sorted(heads["n_head"]) == [1, 2, 4, 8] and heads["val_loss"].between(2, 5).all()
    assert sorted(df.loc[df.variant == "nopos", ["exercise", "pos_emb"]].values.tolist()) == [["nopos", False], ["nopos002", False]]
    # The aggregate's numbers are the runs' own: one seed, so no spread and no interval.
    h1 = agg[(agg.exercise == "heads") & (agg.variant == "h1")].iloc[0]
    assert h1["n"] == 1 and h1["mean"] == heads.loc[heads.variant == "h1", "val_loss"].iloc[0]
    assert math.isnan(h1["std"]) and math.isnan(h1["low"])
    assert list(curves.columns) == ["exercise", "variant", "seed", "run_id", "metric", "step", "value"]
    assert sorted(curves["step"].unique()) == [0, 10, 20] and set(curves["variant"]) == {"pos", "nopos"}


def test_the_aggregate_gives_intervals_as_numbers():
    df = pd.DataFrame({"exercise": "e", "variant": ["a", "a", "a", "b"], "seed": [1, 2, 3, 1],
                       "counted": [True, True, True, True], "val_loss": [1.0, 1.2, 1.4, 2.0]})
    agg = runs.aggregate(df, ["val_loss"]).set_index("variant")
    a = agg.loc["a"]
    assert a["n"] == 3 and a["mean"] == pytest.approx(1.2) and a["std"] == pytest.approx(0.2)
    # The t-interval of a mean is Welch's interval against a constant: the report's own arithmetic.
    d = stats.welch([1.0, 1.2, 1.4], [0.0, 0.0])
    assert (a["low"], a["high"]) == (pytest.approx(d.low), pytest.approx(d.high))
    assert a["text"] == numbers.mean_std([1.0, 1.2, 1.4]) == "1.200 ± 0.200"
    assert agg.loc["b", "n"] == 1 and math.isnan(agg.loc["b", "low"])


def test_make_export_writes_parquet_and_csv(quick_env, tmp_path):
    env = {**os.environ, "TINYGPT_MAKEARGS_ECHO": "1"}   # what lm/commands/makeargs.py would start analysis.runs with
    shown = subprocess.run(["make", "-s", "-o", ".venv/.installed", f"PY={sys.executable}", "export",
                            "ARGS=quick=true"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert json.loads(shown.stdout) == ["quick=true"]
    assert runs.main(["quick=true", f"out={tmp_path}"]) == 0
    for name in ("runs", "aggregate", "histories"):
        parquet = pd.read_parquet(tmp_path / f"{name}.parquet")
        csv = pd.read_csv(tmp_path / f"{name}.csv")
        assert len(parquet) == len(csv) > 0 and list(parquet.columns) == list(csv.columns)
    histories = pd.read_parquet(tmp_path / "histories.parquet")
    assert {"train_loss", "val_loss", "train_time_s", "val_loss_at_position", "honest_val_loss"} == \
        set(histories["metric"])
    agg = pd.read_parquet(tmp_path / "aggregate.parquet")
    assert {"val_loss", "n_params", "word_validity"} <= set(agg["metric"])


def test_an_empty_store_is_one_line(tmp_path, capsys):
    assert runs.main([f"tracking_uri=sqlite:///{tmp_path}/none.db", f"out={tmp_path}"]) == 1
    assert capsys.readouterr().err.startswith("error: no MLflow store at ")
