"""Grid sweeps from the command line, in Hydra's multirun syntax, run as an exercise of their own by the suite.

    python -m lm.commands.train -m model.n_head=1,2,4,8 model.n_layer=2,4 [train.steps=1000] [seeds=3] [sweep.name=...]
    make sweep ARGS="model.n_head=1,2,4,8 model.n_layer=range(2,5)" SEEDS=3

Hydra's override parser reads the arguments and its BasicSweeper's rule makes the grid (every combination of the
swept values: lists, range(), choice(), config groups). Each point is a variant named after its values
(`n_head=2,n_layer=4`), trained with 1 seed unless seeds= says more, through lm.suite.run: resumable (a finished
point is never trained again), on parallel workers or a launcher, with a progress bar and an ETA. The suite's own
keys (seeds, workers, threads, launcher, quick, tracking_uri) configure it; every other override is the grid.

In MLflow a sweep is the experiment `sweep/<name>` (the swept keys, or sweep.name=...): a parent run tagged
role=exercise, a child per point and seed, and on the parent the artifact exercise.yaml, in experiments/*.yaml's
format with `report: [{kind: sweep, metric: val_loss}]`, so that `make report` gives it a section.
"""
from dataclasses import fields

import yaml
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException

from lm.settings import config
from lm.settings.config import ConfigError
from lm.settings.exercises import Exercise
from lm.suite.settings import SuiteConfig

SUITE_KEYS = {f.name for f in fields(SuiteConfig)} - {"ablations"}  # a sweep is its own exercise
NAME_KEY = "sweep.name"
ARTIFACT = "exercise.yaml"


def split(argv: list[str]) -> tuple[str | None, list[str], list[str]]:
    """The sweep's name, the suite's own arguments and the grid's overrides."""
    name, own, grid = None, [], []
    for a in argv:
        key = a.lstrip("+~").split("=")[0]
        if key == NAME_KEY:
            name = a.partition("=")[2].strip().strip("/") or None
        elif key.split(".")[0] in SUITE_KEYS:
            own.append(a)
        else:
            grid.append(a)
    return name, own, grid


def expand(overrides: list[str]) -> tuple[list[str], list[str], list[list[str]]]:
    """The swept keys, the overrides every point shares, and each point's own overrides, in Hydra's order."""
    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
        points = BasicSweeper.split_arguments(parsed, None)[0]
    except HydraException as e:
        raise ConfigError(f"malformed sweep: {config.one_line(e)}") from None
    swept = [o.get_key_element() for o in parsed if o.is_sweep_override()]
    if not swept:
        raise ConfigError("a sweep needs a key with several values, as in -m model.n_head=1,2,4 or "
                          "model.n_layer=range(2,5)")
    for key in ("seed", "ablations", "tracking.experiment", "tracking.run_name"):
        if any(o.get_key_element().lstrip("+~") == key for o in parsed):
            raise ConfigError(f"{key}= cannot be set in a sweep" + (": give the number of seeds, seeds=3 (make "
                                                                    "sweep SEEDS=3)" if key == "seed" else ""))
    empty = [o.input_line for o in parsed if o.is_sweep_override() and not list(o.sweep_string_iterator())]
    if empty:
        raise ConfigError(f"malformed sweep: {empty[0]!r} has no values")
    common = [p for p in points[0] if p.split("=")[0] not in swept]
    return swept, common, [[p for p in point if p.split("=")[0] in swept] for point in points]


def short_names(keys: list[str]) -> dict[str, str]:
    """model.n_head → n_head, unless two swept keys end alike."""
    last = [k.lstrip("+~").split(".")[-1] for k in keys]
    return {k: s if last.count(s) == 1 else k.lstrip("+~") for k, s in zip(keys, last)}


def exercise(name: str | None, swept: list[str], common: list[str], points: list[list[str]]) -> Exercise:
    short = short_names(swept)
    variants = {}
    for point in points:
        values = dict(p.split("=", 1) for p in point)
        variants[",".join(f"{short[k]}={values[k]}" for k in swept)] = point
    keys = " × ".join(k.lstrip("+~") for k in swept)
    return Exercise(name=f"sweep/{name or '-'.join(short.values())}", title=f"Sweep over {keys}",
                    lesson="none: a grid sweep from the command line",
                    measures=f"validation loss against {keys}", variants=variants, overrides=common)


def to_yaml(ex: Exercise, steps: int, seeds: int) -> str:
    """The exercise as experiments/*.yaml would declare it, for the parent run and for `make report`."""
    d = {"title": ex.title, "lesson": ex.lesson, "measures": ex.measures, "steps": steps, "seeds": seeds,
         "overrides": ex.overrides, "variants": ex.variants, "report": [{"kind": "sweep", "metric": "val_loss"}]}
    return f"# {ex.name}: written by lm/suite/sweep.py\n" + yaml.safe_dump(d, sort_keys=False, allow_unicode=True,
                                                                    default_flow_style=None, width=1000)


