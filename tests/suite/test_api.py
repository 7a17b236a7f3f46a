"""The suite as a library, called as a notebook calls it (`from lm.suite import run, SuiteSpec`): two exercises at quick
size into a store of their own, the runs back as a typed result, nothing printed when asked; the command plans the
same runs from its words."""
import pytest
import yaml

from lm.commands import suite as command
from lm.settings.errors import ConfigError
from lm.suite import ExitStatus, SuiteSpec, State, load_suite_config, plan, run

WORDS = ["quick=true", "ablations=[nopos002,heads]"]


def test_a_notebook_runs_two_exercises_at_quick_size_and_gets_its_runs_back_typed(tmp_path, capfd):
    spec = SuiteSpec(ablations=["nopos002", "heads"], quick=True, tracking_uri=f"sqlite:///{tmp_path}/mlflow.db")
    result = run(spec, echo=False)
    assert capfd.readouterr() == ("", "")   # asked for silence: not a line, not a bar, from the suite or its runs
    assert result.status == ExitStatus.OK and not result.interrupted and result.seconds > 0
    assert [f"{r.experiment}/{r.name}" for r in result.runs] == plan(spec).runs == [
        "quick/nopos002/pos/seed1", "quick/nopos002/nopos/seed1",
        "quick/heads/h1/seed1", "quick/heads/h2/seed1", "quick/heads/h4/seed1", "quick/heads/h8/seed1"]
    by_name = {f"{r.exercise}/{r.variant}": r for r in result.runs}
    assert {r.state for r in result.runs} == {State.DONE} and result.ran == result.runs
    assert {r.seed for r in result.runs} == {1} and len({r.run_id for r in result.runs}) == 6
    for r in result.runs:
        assert r.reason is None and 2.0 < r.metrics["val_loss"] < 4.5 and r.metrics["val_perplexity"] > 1, r
    # heads' h4 is nopos002's pos (lesson 002's base model): trained once, its results copied
    assert by_name["heads/h4"].copied_from == by_name["nopos002/pos"].run_id
    assert by_name["heads/h4"].metrics == by_name["nopos002/pos"].metrics
    # the means as numbers, the seed count apart; str() is the parent run's tag, as the closing table shows it
    h1 = result.means["quick/heads"]["h1/val_loss"]
    assert (h1.mean, h1.std, h1.seeds) == (by_name["heads/h1"].metrics["val_loss"], None, 1)
    assert str(h1) == f"{by_name['heads/h1'].metrics['val_loss']:.4g} (1 seed)"
    losses = [str(m) for means in result.means.values() for key, m in means.items() if key.endswith("/val_loss")]
    assert len(losses) == 6 and all(text in result.table for text in losses)   # the closing table's column
    table = result.means_table().set_index(["experiment", "variant", "metric"])
    assert table.loc[("quick/heads", "h1", "val_loss"), "mean"] == h1.mean
    assert table.loc[("quick/heads", "h1", "val_loss"), "seeds"] == 1 and table["seeds"].dtype.kind == "i"
    assert len(table) == sum(len(means) for means in result.means.values())

    again = run(spec, echo=False)            # a second call: every run skipped, as it was
    assert again.status == ExitStatus.OK and again.ran == []
    assert {r.state for r in again.runs} == {State.FINISHED}
    assert [(r.run_id, r.metrics) for r in again.runs] == [(r.run_id, r.metrics) for r in result.runs]
    assert again.means == result.means and again.table == result.table


def test_the_command_and_the_library_plan_the_same_runs(capsys):
    assert command.main(["--cfg", *WORDS, "seeds=2"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    spec = SuiteSpec(ablations=["nopos002", "heads"], quick=True, seeds=2)
    parsed = load_suite_config([*WORDS, "seeds=2"])
    assert parsed == spec                    # conf/suite.yaml's defaults are the spec's own
    assert printed["runs"] == plan(spec).runs == plan(parsed).runs
    assert [j.config_hash for j in plan(spec).jobs] == [j.config_hash for j in plan(parsed).jobs]


def test_a_spec_that_cannot_run_is_its_error_before_any_work(tmp_path):
    spec = SuiteSpec(ablations=["nopos", "nosuch"], quick=True, tracking_uri=f"sqlite:///{tmp_path}/mlflow.db")
    with pytest.raises(ConfigError, match="unknown ablation 'nosuch'"):
        run(spec)
    assert not list(tmp_path.iterdir())
