"""The exercise file as a schema: every mistake one line with its file, its line and the closest known name, before
anything trains; the report kinds' table the same as the report's; the JSON Schema for editors the model's."""
import dataclasses
import inspect
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from analysis.report import kinds, sections
from lm.heads.table import STATISTICS
from lm.settings import exercise_file, metrics, report_kinds
from lm.settings.claims import Claim
from lm.settings.errors import ConfigError
from lm.settings.exercises import FOLDER_VARIABLE, Exercise, load_all, parse
from tests.conftest import ROOT

HEAD = "title: t\nlesson: l\nmeasures: m\nvariants:\n  base: []\n  wide: [model.n_embd=128]\n"   # lines 1-6
CLAIM = "claims:\n  - text: Wider ends lower\n"                                                  # lines 7-8

# Each mistake: the file's text, then the message, which names the line the mistake is on.
MISTAKES = {
    "a kind misspelt": (HEAD + "report:\n  - kind: curve\n    metrics: [val_loss]\n",
                        "x.yaml:8: report entry 1 has unknown kind 'curve' (did you mean 'curves'?)"),
    "a metric misspelt": (HEAD + CLAIM + "    check: wide.val_los < base.val_loss\n",
                          "x.yaml:9: claim 'Wider ends lower'… reads an unknown metric wide.val_los "
                          "(did you mean 'val_loss'?)"),
    "a field misspelt": (HEAD + "step: 1000\n", "x.yaml:7: has unknown field 'step' (did you mean 'steps'?)"),
    "a claim's field misspelt": (HEAD + CLAIM + "    chek: wide.val_loss < base.val_loss\n",
                                 "x.yaml:9: claim 'Wider ends lower'… has unknown field 'chek' "
                                 "(did you mean 'check'?)"),
    "a variant misspelt": (HEAD + CLAIM + "    check: wyde.val_loss < base.val_loss\n",
                           "x.yaml:9: claim 'Wider ends lower'… names unknown variants ['wyde'] "
                           "(did you mean 'wide'?)"),
    "an option misspelt": (HEAD + "report:\n  - kind: curves\n    metrix: [val_loss]\n",
                           "x.yaml:9: report entry 1 has unknown field 'metrix' (did you mean 'metric'?)"),
    "a report's metric misspelt": (HEAD + "report:\n  - kind: final\n    metric: val_los\n",
                                   "x.yaml:9: report entry 1 (kind: final) names an unknown metric 'val_los' "
                                   "(did you mean 'val_loss'?)"),
    "a report's variant misspelt": (HEAD + "report:\n  - kind: samples\n    variants: [wid]\n",
                                    "x.yaml:9: report entry 1 (kind: samples) names an unknown variant 'wid' "
                                    "(did you mean 'wide'?)"),
    "an answer misspelt": (HEAD + CLAIM + "    answer: val_lss\n",
                           "x.yaml:9: claim 'Wider ends lower'… answers with an unknown metric 'val_lss' "
                           "(did you mean 'val_loss'?)"),
    "another exercise misspelt": (HEAD + CLAIM + "    check: baselin:base.val_loss < 3\n",
                                  "x.yaml:9: claim 'Wider ends lower'… names an unknown exercise 'baselin' "
                                  "(did you mean 'baseline'?)"),
    "a budget naming no variant": (HEAD + "budget: bse\n", "x.yaml:7: budget names no variant: 'bse' "
                                                           "(did you mean 'base'?)"),
    "a YAML syntax error": (HEAD + CLAIM + "    check: [wide.val_loss\n    why: x\n",
                            "x.yaml:10: YAML syntax: expected ',' or ']', but got ':'"),
    "a negative delta": (HEAD + CLAIM + "    value: 1.5\n    ours: base.val_loss\n    delta: -0.1\n",
                         "x.yaml:11: claim 'Wider ends lower'… has delta: -0.1: input should be greater than 0"),
    "a field missing": ("title: t\nlesson: l\nvariants: {a: []}\n", "x.yaml:1: needs `measures`"),
}


@pytest.mark.parametrize("text,message", MISTAKES.values(), ids=MISTAKES.keys())
def test_each_mistake_is_one_line_with_its_file_line_and_the_closest_name(text, message):
    with pytest.raises(ConfigError) as e:
        parse("x", text, "x.yaml", others={"baseline": ["base"], "x": ["base", "wide"]})
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_a_value_claim_takes_a_delta_and_a_whole_file_parses():
    ex = parse("x", HEAD + CLAIM + "    value: 1.5\n    ours: base.val_loss\n    delta: 0.05\n"
               "report:\n  - kind: curves\n    metrics: [val_loss, train_loss]\n  - kind: samples\n    variants: [wide]\n",
               "x.yaml")
    assert ex.claims[0].delta == 0.05 and ex.report[1] == {"kind": "samples", "variants": ["wide"]}


@pytest.mark.parametrize("kind", report_kinds.KINDS)
def test_every_report_kind_takes_its_own_options_and_refuses_another(kind):
    options = report_kinds.KINDS[kind]
    entry = {"kind": kind, **{o: _example(o, t) for o, t in options.items()}}
    text = HEAD + yaml.safe_dump({"report": [entry]}, sort_keys=False)
    assert parse("x", text, "x.yaml").report == [entry]
    with pytest.raises(ConfigError, match=r"^x.yaml:9: report entry 1 has unknown field 'colour'; its fields are "
                                          r"kind\b"):
        parse("x", HEAD + yaml.safe_dump({"report": [{"kind": kind, "colour": "red"}]}, sort_keys=False),
              "x.yaml")


# A value of each option's type that the checks accept: a known metric wherever a text could name one.
EXAMPLES = {bool: True, int | None: 3, str: "val_loss", str | None: "val_loss", list[str]: ["val_loss"],
            list[str] | None: ["val_loss"], dict[str, str]: {"val_loss": "loss"}}


def _example(option, annotation):
    return ["wide"] if option in report_kinds.VARIANT_OPTIONS else EXAMPLES[annotation]


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Claim)])
def test_every_claim_field_is_the_schema_s_and_a_typo_of_it_is_refused(field):
    assert field in exercise_file.ClaimFile.model_fields
    typo = field[:-1] + ("x" if field[-1] != "x" else "y")
    with pytest.raises(ConfigError) as e:
        parse("x", HEAD + CLAIM + f"    {typo}: 1\n", "x.yaml")
    assert str(e.value).startswith(f"x.yaml:9: claim 'Wider ends lower'… has unknown field {typo!r} "
                                   f"(did you mean {field!r}?)")


def test_the_schema_has_every_field_of_an_exercise_and_a_claim_and_no_other():
    assert set(exercise_file.ClaimFile.model_fields) == {f.name for f in dataclasses.fields(Claim)}
    assert set(exercise_file.ExerciseFile.model_fields) == {f.name for f in dataclasses.fields(Exercise)} - {"name"}


def test_the_report_kinds_table_is_the_report_s_own():
    """lm/settings/report_kinds.py, which the spec reads, against analysis/report/kinds.py and sections/: kind for kind,
    option for option, type for type."""
    own = {name: {f.name: f.type for f in dataclasses.fields(k)} for name, k in kinds.SECTION_KINDS.items()}
    for module in sections.modules():
        render = inspect.signature(__import__(f"analysis.report.sections.{module}", fromlist=["render"]).render)
        own[module] = {p.name: p.annotation for p in list(render.parameters.values())[1:]}
    assert report_kinds.KINDS == own


def test_what_the_heads_and_knockout_tables_log_is_known_and_a_typo_is_not():
    logged = [s.metric_name(how, block) for s in STATISTICS for how in s.aggregate
              for block in (None, *((1, 2) if s.per_block else ()))]
    assert logged and all(metrics.known(m) for m in logged)
    assert all(metrics.known(m) for m in ("knockout_b1h2", "probe_p_e", "val_loss", "train_time_s"))
    assert not metrics.known("val_los") and metrics.closest("val_los") == "val_loss"


def test_the_committed_json_schema_is_the_model_s_and_every_exercise_file_fits_it():
    assert exercise_file.SCHEMA_FILE.read_text(encoding="utf-8") == exercise_file.schema_text(), \
        "experiments/exercise.schema.json is stale: run make schema"
    schema = json.loads(exercise_file.SCHEMA_FILE.read_text(encoding="utf-8"))
    assert set(schema["properties"]) == set(exercise_file.ExerciseFile.model_fields)
    files = sorted((ROOT / "experiments").glob("*.yaml"))
    assert len(files) == len(load_all())
    for path in files:   # the committed schema is the model's (above): the model validates each file
        exercise_file.ExerciseFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def test_the_suite_refuses_a_misspelt_file_before_its_heavy_imports_and_before_anything_trains(tmp_path):
    """In about a second: the interpreter, Hydra and pydantic, never torch, Lightning or MLflow (5 s more)."""
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "wide.yaml").write_text(MISTAKES["a kind misspelt"][0])
    env = {**os.environ, FOLDER_VARIABLE: str(folder), "TINYGPT_STORE": str(tmp_path / "mlruns")}
    env.pop("MLFLOW_TRACKING_URI", None)
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "lm.commands.suite", "quick=true"], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=120)
    imported = {m.split(".")[0] for m in re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", p.stderr, re.M)}
    said = [ln for ln in p.stderr.splitlines() if not ln.startswith("import time:")]
    assert p.returncode == 2 and said == ["error: wide.yaml:8: report entry 1 has unknown kind 'curve' (did you mean "
                                          "'curves'?); the kinds are " + ", ".join(report_kinds.KINDS)]
    assert not imported & {"torch", "pytorch_lightning", "lightning", "mlflow", "pandas"}
    assert not (tmp_path / "mlruns").exists()
