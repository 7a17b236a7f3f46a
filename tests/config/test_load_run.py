"""A plan's configs, composed once per variant and copied for each seed (config.load_run), are those Hydra composes
for each run on its own, errors included."""
import pytest

from lm.settings import config, exercises
from lm.settings.errors import ConfigError


def whole(overrides: list[str], seed: int, name: str):
    return config.load([*overrides, f"seed={seed}", f"tracking.run_name={config.quoted(name)}"])


def test_every_exercise_s_runs_are_composed_as_hydra_composes_them():
    for ex in exercises.load_all().values():
        for spec in ex.runs(2):
            derived = config.load_run(spec.shared, spec.seed, spec.name)
            assert derived.to_dict() == whole(spec.shared, spec.seed, spec.name).to_dict(), spec.name


@pytest.mark.parametrize("overrides", [["profile=microgpt", "train.lr=0.01"], ["data=names", "train.steps=5"],
                                       ["model=base", "model.n_layer=4"], ["sample.seed=${seed}"],
                                       ["tracking.experiment='a/b'"]])
def test_group_choices_values_and_interpolations_of_the_seed_compose_alike(overrides):
    a, b = config.load_run(overrides, 7, "v/seed7"), config.load_run(overrides, 8, "v/seed8")
    assert a.to_dict() == whole(overrides, 7, "v/seed7").to_dict() and b.to_dict() == whole(overrides, 8, "v/seed8").to_dict()
    assert a.seed == 7 and b.seed == 8 and a.tracking.run_name == "v/seed7"


@pytest.mark.parametrize("overrides", [["model.nosuch=1"], ["train.lr=abc"], ["model.n_embd=65"]])
def test_a_bad_value_is_the_same_one_line_error(overrides):
    with pytest.raises(ConfigError) as derived:
        config.load_run(overrides, 1, "v/seed1")
    with pytest.raises(ConfigError) as composed:
        whole(overrides, 1, "v/seed1")
    assert str(derived.value) == str(composed.value)
