"""Hydra's and OmegaConf's errors told apart by their types, each one line with the fix, a misspelt key with
difflib's nearest; a suite's option misspelt blamed on the suite, not on a run."""
import ast
import inspect

import pytest

from lm.settings import config
from lm.settings.config import ConfigError
from lm.suite import load_suite_config

RUN = {
    "a misspelt key": (["model.n_embed=96"], "unknown config key 'model.n_embed' (did you mean model.n_embd?)"),
    "a misspelt section": (["modle.n_embd=96"], "unknown config key 'modle'"),
    "not an integer": (["model.n_head=four"], "model.n_head='four' is not an integer"),
    "not a float": (["train.lr=fast"], "train.lr='fast' is not a float"),
    "not a bool": (["measure.knockout=ture"], "measure.knockout='ture' is not a bool: true or false"),
    "no such file": (["data=poems"], "data=poems: no such option (conf/data/ has names, shakespeare, text)"),
    "no such preset": (["measure=some"], "measure=some: no such option (measure takes all, none)"),
    "a bare word": (["quick"], "'quick' is not key=value: write quick=true"),
    "an unquoted symbol": (["data.sample_prompt=Ωmega"], "cannot parse the override 'data.sample_prompt=Ωmega'; quote"),
}


@pytest.mark.parametrize("overrides,message", RUN.values(), ids=RUN.keys())
def test_each_error_of_hydra_is_one_line_with_its_fix(overrides, message):
    with pytest.raises(ConfigError) as e:
        config.load(overrides)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_the_errors_are_told_apart_by_type_not_by_their_text():
    source = inspect.getsource(config.one_line)
    calls = {n.func.attr for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and n.func.value.id == "re"}
    assert not calls and "isinstance" in source


@pytest.mark.parametrize("argv,message", [
    (["worker=2"], "unknown option 'worker': did you mean workers=...?"),
    (["quick=true", "seed=2", "qiuck=true"], "unknown option 'qiuck': did you mean quick=...?"),
])
def test_a_misspelt_suite_option_is_the_suite_s_with_the_nearest(argv, message):
    with pytest.raises(ConfigError) as e:
        load_suite_config(argv)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_a_run_s_key_given_to_the_suite_goes_to_every_run():
    spec = load_suite_config(["quick=true", "train.lr=0.01", "seed=2"])
    assert spec.quick and spec.overrides[-2:] == ["train.lr=0.01", "seed=2"]
