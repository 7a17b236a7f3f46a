"""A suite's runs make the end-of-run measurements something reads of them (lm/suite/measuring.py): the costly ones
(lm/settings/measures.py's When.READ) only where a claim, a report block or a chart of their exercise, or another
exercise's claim on their variant, reads what they provide; the MLflow model on each variant's first seed; the
user's own switches as set. What a run does not make is in its tags, so the report says "not measured"."""
import importlib
import json
import shutil
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from analysis.report import sections
from analysis.report.kinds import SECTION_KINDS
from lm.settings import exercises, measures, needs
from lm.settings.measures import TABLE, When
from lm.suite import SuiteSpec, load_suite_config, plan, run
from lm.suite import State
from lm.suite.bookkeeping import find_runs
from lm.tracking.store import Store

ROOT = Path(__file__).resolve().parents[2]


def measured(job) -> set[str]:
    return {m.name for m in TABLE if getattr(job.cfg.measure, m.name)}


def jobs_of(words: list[str]) -> dict[str, object]:
    return {f"{j.spec.exercise}/{j.spec.name}": j for j in plan(load_suite_config(words)).jobs}


@pytest.fixture(scope="module")
def full():
    """The full suite's plan at 3 seeds: composed and checked, nothing trained."""
    return jobs_of([])


def test_the_knock_out_and_the_training_texts_loss_are_made_only_where_something_reads_them(full):
    knocked = {name.rsplit("/", 1)[0] for name, j in full.items() if "knockout" in measured(j)}
    # read by claims (baseline, nopos, microgpt), by heads' charts (its `ui:` bars), and by the runs that share
    # heads' h4 config (lesson 002's base model: context's ctx64, nopos002's pos, recipe002's cpu, scaling002's
    # base) or nopos' pos config (lesson 000's model at 1,000 steps: aa's a, sqrtd's scaled)
    assert knocked == {"baseline/base", "nopos/pos", "nopos/nopos", "microgpt/microgpt",
                       "heads/h1", "heads/h2", "heads/h4", "heads/h8", "context/ctx64", "nopos002/pos",
                       "recipe002/cpu", "scaling002/base", "aa/a", "sqrtd/scaled"}
    text = {name.rsplit("/", 1)[0] for name, j in full.items() if "train_loss" in measured(j)}
    assert text == {"nomask/masked", "nomask/nomask", "nomask002/masked", "nomask002/nomask", "recipe002/cpu",
                    "context/ctx64", "heads/h4", "nopos002/pos", "scaling002/base"}
    always = {m.name for m in TABLE if m.when == When.ALWAYS}
    assert all(always - {"heads", "knockout", "attention"} <= measured(j) for j in full.values())


def test_the_mlflow_model_is_logged_on_each_variants_first_seed_and_the_tag_says_where(full):
    logged = sorted(name for name, j in full.items() if j.cfg.measure.mlflow_model)
    variants = {name.rsplit("/", 1)[0] for name in full}
    assert len(logged) == len(variants)
    assert all(name.endswith(("/seed1", "/seed1001")) for name in logged)   # aa's b has seeds of its own
    assert full["heads/h2/seed1"].tags[measures.MODEL_TAG] == "logged: the variant's first seed"
    assert full["heads/h2/seed2"].tags[measures.MODEL_TAG] == (
        "not logged: on the variant's first seed (seed 1); measure.mlflow_model=true logs it on every run")


def test_twins_make_what_either_exercise_reads(full):
    h4, pos = full["heads/h4/seed2"], full["nopos002/pos/seed2"]
    assert h4.config_hash == pos.config_hash and measured(h4) == measured(pos) >= {"knockout", "train_loss"}


def test_the_users_switches_win_over_what_the_suite_would_choose():
    on = jobs_of(["ablations=[scaling]", "measure.knockout=true", "measure.mlflow_model=true"])
    assert all({"knockout", "mlflow_model"} <= measured(j) for j in on.values())
    assert on["scaling/depth4/seed2"].tags[measures.MODEL_TAG] == "logged: measure.mlflow_model=true"
    assert all("train_loss" not in measured(j) for j in on.values())   # left to the suite
    off = jobs_of(["ablations=[nopos]", "measure=none"])
    assert all(measured(j) == set() for j in off.values())
    assert off["nopos/pos/seed1"].tags[measures.MODEL_TAG] == "not logged: measure.mlflow_model=false"


def test_another_exercises_claim_on_a_variant_makes_its_runs_measure_it(tmp_path, monkeypatch):
    (tmp_path / "plain.yaml").write_text("title: plain\nlesson: none\nmeasures: the loss\nvariants: {v: []}\n")
    (tmp_path / "reader.yaml").write_text(
        "title: reader\nlesson: none\nmeasures: nothing\nvariants: {w: [model.n_head=2]}\nclaims:\n"
        "  - {text: reads plain's knock-out, check: 'plain:v.knockout_head_max > w.val_loss'}\n")
    monkeypatch.setenv(exercises.FOLDER_VARIABLE, str(tmp_path))
    alone = jobs_of(["ablations=[plain]"])             # the reader need not be in the suite
    assert "knockout" in measured(alone["plain/v/seed1"]) and "heads" in measured(alone["plain/v/seed1"])
    (tmp_path / "reader.yaml").unlink()
    assert "knockout" not in measured(jobs_of(["ablations=[plain]"])["plain/v/seed1"])


def test_each_report_kind_is_known_with_all_it_fetches():
    """lm/settings/needs.py's KIND_READS against the report's own lists of what each kind fetches of every run."""
    for name, kind in SECTION_KINDS.items():
        fetched = set(kind().histories()) | set(kind().artifacts())
        assert name in needs.KIND_READS and fetched <= needs.report_reads({"kind": name}), name
    for name in sections.modules():
        module = importlib.import_module(f"analysis.report.sections.{name}")
        fetched = set(getattr(module, "HISTORIES", [])) | set(getattr(module, "ARTIFACTS", []))
        assert name in needs.KIND_READS and fetched <= needs.report_reads({"kind": name}), name
    used = {e["kind"] for ex in exercises.load_all().values() for e in ex.report or ()}
    assert used <= needs.KIND_READS.keys()


def test_a_run_trained_again_in_place_makes_what_it_began_with(tmp_path):
    """A run started before the plan changed (here: one that began with the knock-out on) finishes as it began, so
    that its params, which MLflow never lets change, stay true."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    p = plan(load_suite_config(["quick=true", "ablations=[scaling]", f"tracking_uri={uri}"]))
    store = Store(uri)
    find_runs(store, p.exercises, p.jobs, quick=True)
    job = p.jobs[0]
    assert not job.cfg.measure.knockout
    run_id = store.create_run(job.experiment, job.spec.name, {"config_hash": job.config_hash}, parent=job.parent)
    store.client.log_param(run_id, "measure.knockout", "True")   # then killed: left RUNNING
    again = plan(load_suite_config(["quick=true", "ablations=[scaling]", f"tracking_uri={uri}"]))
    find_runs(store, again.exercises, again.jobs, quick=True)
    assert again.jobs[0].run_id == run_id and again.jobs[0].cfg.measure.knockout


@pytest.fixture(scope="module")
def two_seeds(tmp_path_factory):
    """nopos (whose claims read the knock-out) and an exercise of one variant, its pos config, at 2 seeds: 4 runs
    trained, 2 copied."""
    folder = tmp_path_factory.mktemp("exercises")
    shutil.copy(ROOT / "experiments" / "nopos.yaml", folder)
    (folder / "twin.yaml").write_text("title: twin\nlesson: none\nmeasures: the loss\nvariants: {pos: []}\n")
    uri = f"sqlite:///{tmp_path_factory.mktemp('store')}/mlflow.db"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(exercises.FOLDER_VARIABLE, str(folder))
        result = run(SuiteSpec(ablations=["nopos", "twin"], quick=True, seeds=2, tracking_uri=uri), echo=False)
    assert {r.state for r in result.runs} == {State.DONE}
    client = MlflowClient(uri)
    runs = {f"{r.exercise}/{r.name}": client.get_run(r.run_id) for r in result.runs}
    models = {m.source_run_id for exp in client.search_experiments() for m in client.search_logged_models([exp.experiment_id])}
    return client, runs, models


def test_a_suite_logs_what_it_made_and_tags_what_it_did_not(two_seeds):
    client, runs, models = two_seeds
    assert runs["twin/pos/seed1"].data.tags["copied_from"] == runs["nopos/pos/seed1"].info.run_id
    for name, r in runs.items():
        files = {a.path for a in client.list_artifacts(r.info.run_id)}
        assert "knockout.csv" in files and "knockout_prev_head_b1" in r.data.metrics, name   # nopos' claims read them
        assert "train_eval_loss" not in r.data.metrics, name                                # nothing reads it
        tag = r.data.tags[measures.TAG]
        assert measures.why_not_measured(tag, "train_eval_loss") == "measure.train_loss=false", name
        first = name.endswith("seed1")
        assert (r.info.run_id in models) == first, name                 # the model on each variant's first seed
        assert (measures.why_not_measured(tag, "model") is None) == first, name
        assert r.data.tags[measures.MODEL_TAG].startswith("logged" if first else "not logged"), name
        assert r.data.params["measure.mlflow_model"] == str(first) and r.data.params["measure.knockout"] == "True"
    assert json.loads(runs["twin/pos/seed2"].data.tags[measures.TAG]) == json.loads(
        runs["nopos/pos/seed2"].data.tags[measures.TAG])
