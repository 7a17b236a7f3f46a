"""Grid sweeps from the command line: Hydra's multirun syntax expanded by Hydra's own parser, run by the suite as
an exercise of its own (sweep/<name>: a parent run with exercise.yaml, a child per point and seed), resumable."""
import json
import os
import subprocess
import sys

import pytest
import yaml
from mlflow.tracking import MlflowClient

from lm.commands import cli, train
from lm.suite import sweep
from tests.conftest import ROOT

TINY = ["quick=true", "model.n_layer=1", "model.n_embd=16", "workers=2"]


def test_the_grid_is_every_combination_of_the_swept_values_in_hydras_order():
    swept, common, points = sweep.expand(["model.n_head=1,2", "model.n_layer=range(2,5)", "train.steps=20"])
    assert swept == ["model.n_head", "model.n_layer"] and common == ["train.steps=20"]
    assert [p for p in points] == [[f"model.n_head={h}", f"model.n_layer={n}"] for h in (1, 2) for n in (2, 3, 4)]
    ex = sweep.exercise(None, swept, common, points)
    assert ex.name == "sweep/n_head-n_layer"
    assert list(ex.variants)[:2] == ["n_head=1,n_layer=2", "n_head=1,n_layer=3"]


def test_a_bare_comma_list_is_a_sweep_and_a_single_value_is_not():
    assert cli.is_sweep(["model.n_head=1,2"]) and cli.is_sweep(["model.n_layer=range(1,3)"])
    assert not cli.is_sweep(["model.n_head=2", "data.sample_prompt='a,b'"])


MALFORMED = {
    "a doubled comma": (["-m", "model.n_head=1,,2"], "malformed sweep: cannot parse 'model.n_head=1,,2'"),
    "nothing swept": (["-m", "train.steps=3"], "a sweep needs a key with several values"),
    "the seed swept": (["-m", "model.n_head=1,2", "seed=1,2"], "give the number of seeds, seeds=3"),
    "exercises named": (["-m", "model.n_head=1,2", "ablations=[heads]"], "ablations= cannot be set in a sweep"),
    "an unknown key": (["model.n_heads=1,2"], "unknown config key 'model.n_heads'"),
    "a bad value at one point": (["-m", "model.n_head=2,3"], "model.n_embd=64 is not divisible by model.n_head=3"),
    "an empty range": (["-m", "model.n_head=range(3,1)"], "has no values"),
}


@pytest.mark.parametrize("argv,message", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_sweep_is_one_line_before_any_work(argv, message, store, capsys):
    assert train.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not store.exists()


def test_cfg_prints_the_sweeps_exercise_and_its_runs_and_touches_nothing(store, capsys):
    assert train.main(["-m", "--cfg", "model.n_head=1,2", "train.steps=20", "seeds=2", "sweep.name=heads"]) == 0
    out = capsys.readouterr().out
    ex = yaml.safe_load(out)
    assert ex["variants"] == {"n_head=1": ["model.n_head=1"], "n_head=2": ["model.n_head=2"]}
    assert ex["steps"] == 20 and ex["seeds"] == 2 and ex["report"] == [{"kind": "sweep", "metric": "val_loss"}]
    assert "#   sweep/heads/n_head=2/seed2" in out and not store.exists()


def test_a_sweep_trains_its_grid_into_mlflow_once(store, capsys):
    """Two points at toy size: the experiment, its parent with exercise.yaml, a child per point; a second
    identical call trains nothing."""
    assert train.main(["model.n_head=1,2", *TINY]) == 0
    client = MlflowClient(f"sqlite:///{store / 'mlflow.db'}")
    exp = client.get_experiment_by_name("quick/sweep/n_head")
    runs = client.search_runs([exp.experiment_id])
    parent = next(r for r in runs if r.data.tags.get("role") == "exercise")
    children = sorted((r for r in runs if r is not parent), key=lambda r: r.info.run_name)
    assert [r.info.run_name for r in children] == ["n_head=1/seed1", "n_head=2/seed1"]
    assert all(r.info.status == "FINISHED" and r.data.tags["mlflow.parentRunId"] == parent.info.run_id
               and "val_loss" in r.data.metrics for r in children)
    assert [r.data.params["model.n_head"] for r in children] == ["1", "2"]
    ex = yaml.safe_load(open(client.download_artifacts(parent.info.run_id, "exercise.yaml", str(store.parent))))
    assert ex["title"] == "Sweep over model.n_head" and ex["steps"] == 20 and ex["seeds"] == 1
    assert ex["variants"] == {"n_head=1": ["model.n_head=1"], "n_head=2": ["model.n_head=2"]}
    assert ex["overrides"] == ["model.n_layer=1", "model.n_embd=16"]
    assert ex["report"] == [{"kind": "sweep", "metric": "val_loss"}]
    capsys.readouterr()

    assert train.main(["-m", "model.n_head=1,2", *TINY]) == 0
    assert "0 to run" in capsys.readouterr().out
    assert len(client.search_runs([exp.experiment_id])) == len(runs)


def test_make_sweep_passes_seeds_and_the_grid_to_python_m_lm_train():
    """What lm/commands/makeargs.py would start lm.commands.train with (TINYGPT_MAKEARGS_ECHO=1 prints it instead)."""
    env = {**os.environ, "TINYGPT_MAKEARGS_ECHO": "1"}
    out = subprocess.run(["make", "-s", "-o", ".venv/.installed", f"PY={sys.executable}", "sweep",
                          "ARGS=model.n_head=1,2 model.n_layer=2,4", "SEEDS=3"], cwd=ROOT, env=env,
                         capture_output=True, text=True).stdout
    assert json.loads(out) == ["-m", "seeds=3", "model.n_head=1,2", "model.n_layer=2,4"]
