"""A run's end-of-run measurements: one table (lm/settings/measures.py), from which the switches (`measure.<name>=false`,
`measure=none`) are derived, and what a run told not to measure is neither logged nor judged, but "not measured" in
the report."""
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from analysis import report
from lm.commands import suite
from lm.measures.end_of_run import MEASURE
from lm.settings import config, measures
from tests.training.test_run import TINY, trained

ROOT = Path(__file__).resolve().parents[2]
OFF = ["measure.knockout=false", "measure.mlflow_model=false", "measure.samples=false"]
NAMES = [m.name for m in measures.TABLE]


def test_the_table_the_switches_and_the_functions_name_the_same_measurements():
    assert NAMES == [f.name for f in dataclasses.fields(measures.MeasureConfig)]
    assert set(MEASURE) == set(NAMES)    # every entry has its function, and every function its entry
    assert all(f.__name__ == name for name, f in MEASURE.items())
    assert not (ROOT / "conf" / "measure").exists()   # no second list of them


def test_measure_none_switches_every_measurement_off_and_leaves_the_config_hash():
    full, bare = config.load([]), config.load(["measure=none"])
    assert measures.switched_off(full.measure) == []
    assert measures.switched_off(bare.measure) == NAMES
    assert measures.switched_off(config.load(["measure=all"]).measure) == []
    assert full.config_hash == bare.config_hash   # the same training: a run made either way counts as done


@pytest.mark.parametrize("name", NAMES)
def test_each_entry_is_a_switch_and_its_patterns_are_its_tag(name):
    cfg = config.load([f"measure.{name}=false"])
    assert measures.switched_off(cfg.measure) == [name]
    tag = measures.not_measured_tag(measures.switched_off(cfg.measure))
    assert json.loads(tag) == {p: f"measure.{name}=false" for p in measures.BY_NAME[name].provides}
    assert config.load_run([f"measure.{name}=false"], 1, "v/seed1").to_dict() == cfg.to_dict() | {
        "seed": 1, "tracking": {**cfg.to_dict()["tracking"], "run_name": "v/seed1"}}


def test_a_preset_that_is_not_one_names_the_presets_in_one_line():
    with pytest.raises(config.ConfigError, match=r"^measure=some: no such option \(measure takes all, none\)$"):
        config.load(["measure=some"])


def test_a_misspelt_switch_is_one_line_before_any_work():
    p = subprocess.run([sys.executable, "-m", "lm.commands.train", "measure.knockout=ture"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0
    assert "measure.knockout" in p.stderr and "ture" in p.stderr


@pytest.fixture(scope="module")
def partly_measured(tmp_path_factory):
    uri, runs = trained(tmp_path_factory.mktemp("store"), [*TINY, *OFF])
    return uri, runs.iloc[0]


def test_a_measurement_switched_off_logs_nothing_and_the_run_says_so(partly_measured):
    uri, run = partly_measured
    client = MlflowClient(uri)
    files = {f.path for f in client.list_artifacts(run.run_id)}
    assert {"heads.csv", "attention.json", "probe.json", "model.pt"} <= files      # left on: made
    assert not files & {"knockout.csv", "samples.txt"}                             # switched off: not made
    metrics = {k.removeprefix("metrics.") for k, v in run.items() if k.startswith("metrics.") and v == v}
    assert "heads_prev_token_max" in metrics and "val_loss" in metrics
    assert not any(m.startswith("knockout_") or m.startswith("word_validity") for m in metrics)
    assert not client.search_logged_models([run.experiment_id])                   # no MLflow model
    tag = run["tags.not_measured"]
    assert measures.why_not_measured(tag, "knockout_prev_head_b1") == "measure.knockout=false"
    assert measures.why_not_measured(tag, "word_validity") == "measure.samples=false"
    assert measures.why_not_measured(tag, "heads_prev_token_max") is None
    assert set(json.loads(tag).values()) == {f"{o.split('=')[0]}=false" for o in OFF}


def test_the_report_says_not_measured_for_a_claim_on_a_measurement_switched_off(tmp_path, monkeypatch):
    """nopos's knock-out claim, on a quick suite told not to knock heads out: "not measured", and the claim on the
    loss, which every run measures, still judged."""
    monkeypatch.setenv("TINYGPT_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert suite.main(["quick=true", "ablations=[nopos]", "measure.knockout=false"]) == 0
    assert report.main(["quick=true", "ablations=[nopos]", f"out={tmp_path / 'report'}", "log=false"]) == 0
    md = (tmp_path / "report" / "report.md").read_text()
    knockout_row = next(ln for ln in md.splitlines() if "previous-character head matters less" in ln)
    assert "not measured" in knockout_row and "measure.knockout=false" in md
    loss_row = next(ln for ln in md.splitlines() if "validation loss is worse" in ln)
    assert "not measured" not in loss_row
