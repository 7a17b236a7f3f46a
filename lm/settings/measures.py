"""What a run measures once it has trained: one entry per measurement (its name, what it is, what it logs), the
table that everything else about the measurements is derived from: their switches (`measure.<name>=false`, the
presets `measure=all` and `measure=none`), the run's `not_measured` tag and the report's "not measured". Each
entry's function is the one of its name in lm/measures/end_of_run.py: a new measurement is an entry here and its
function there (docs/contributing.md, "A measurement").

The final validation loss, its curve and the checkpoint `model.pt` are not in the table: every run makes them,
since the suite, `make sample`, the temperature exercise and every claim about the loss read them.

`make train` makes every entry. A suite's run makes each entry as its `when` says (lm/suite/measuring.py): always,
or only where its exercise reads what the entry provides (lm/settings/needs.py), or on each variant's first seed; a
`measure.<name>=...` of the user's or of an exercise's file wins either way.
"""
import dataclasses
import fnmatch
import json
from dataclasses import dataclass
from enum import Enum


class When(Enum):
    """Which of a suite's runs make a measurement; `make train` makes all of them."""
    ALWAYS = "always"            # every run
    READ = "read"                # a run whose exercise's claims, report blocks or charts read what it provides
    FIRST_SEED = "first seed"    # each variant's first seed, and any run whose exercise reads it


@dataclass(frozen=True)
class Measurement:
    name: str                   # its switch, measure.<name>, and its function's name in lm/measures/end_of_run.py
    what: str
    provides: tuple[str, ...]   # the metrics, tags and artifacts it logs, as fnmatch patterns
    when: When = When.ALWAYS    # on which of a suite's runs
    needs: tuple[str, ...] = ()  # the entries whose results it reads, made before it wherever it is made


# In the order a run makes them: knock-out reads the head statistics' table to name the heads the claims compare.
# The three dearest (knock-out, the MLflow model, the training text's loss: seconds each, docs/notebook.md) are made
# where they are read; the others on every run, where they cost less than the noise of a run's time, and where the
# report's own tables (head statistics, the attention view, the samples) and the UI's Dataset column show every run's.
TABLE = (
    Measurement("probe", "next-character probabilities after data.probe, every lowercase letter's by name and its lead",
                ("probe_top1", "probe_top1_p", "probe_p_*", "probe_lead_*", "probe.json")),
    Measurement("score_array", "one layer's score array as a training step holds it (0: fused kernels tile it)",
                ("score_array_size",)),
    Measurement("train_loss", "the loss on as many fixed windows of the training text as validation reads",
                ("train_eval_loss",), When.READ),
    Measurement("shuffle", "block 1's attention output when the earlier characters are shuffled",
                ("shuffle_change",)),
    Measurement("samples", "sample.count samples, their word validity and shape",
                ("samples.txt", "word_validity*", "real_word_share*", "speaker_line_share*", "line_length*",
                 "short_word_validity", "punctuation_share*")),
    Measurement("heads", "every head's statistics (lm/heads/table.py)", ("heads.csv", "heads_*")),
    Measurement("knockout", "each head, attention and MLP knocked out on the validation windows",
                ("knockout.csv", "knockout_*"), When.READ, ("heads",)),
    Measurement("attention", "every head's weights on the heatmap line and a few more; of a name, where its "
                "last letter looks", ("attention.json", "attention_lines.json", "heatmap_last_*")),
    # Lessons' sentences on the softmax, the mask and the parameter count, each checked on the model's own code:
    # cheap (a few windows, a tenth of a second or less each, the score array's plain path half a second at a context
    # of 128), and made where a claim reads them.
    Measurement("softmax_questions", "fixed inputs through the model's attention: lesson 000's P4, lesson 001's "
                "check yourself, lesson 002's d = 64 demonstration of the 1/√d",
                ("p4_weight_*", "check1_*", "randn_d64_*"), When.READ),
    Measurement("mask", "the causal mask on the trained model: weights on later characters, the first character's "
                "on itself, the gradient reaching masked scores, the weight on a cache's only key",
                ("mask_future_weight_max", "first_self_weight_min", "mask_score_grad_max", "allowed_score_grad_max",
                 "one_key_weight_min"), When.READ),
    Measurement("parameter_terms", "the parameters counted by part, as lesson 000 breaks its count down",
                ("params_*",), When.READ),
    Measurement("score_array_math", "one layer's score array on PyTorch's plain attention path, which holds it",
                ("score_array_size_math",), When.READ),
    Measurement("init_softmax", "the untrained model's softmax: the gradient reaching its scores, its slope, and "
                "how one-hot it is by row length", ("init_score_grad", "init_softmax_slope",
                                                    "init_onehot_share_by_keys", "init_gap8_share_by_keys", "keys"),
                When.READ),
    Measurement("loss_by_position", "the validation loss at each position of the window",
                ("loss_by_position.json", "val_loss_at_position", "position")),
    # Nothing of the project's reads it (make sample, the report and the temperature exercise read model.pt): it is
    # for a user of MLflow's API or UI, for whom one model of each variant is one to load.
    Measurement("mlflow_model", "the model in MLflow's PyTorch flavor (runs:/<id>/model)", ("model",),
                When.FIRST_SEED),
    Measurement("datasets", "the corpus's splits as MLflow datasets (the runs table's Dataset column)",
                ("dataset:*",)),
)
BY_NAME = {m.name: m for m in TABLE}
TAG = "not_measured"
MODEL_TAG = "mlflow_model"   # a suite's run: where its variant's MLflow model is (lm/suite/measuring.py)

# A run's `measure` section: one switch per entry, each on unless the command line or a preset turns it off.
# (Named as this module's, so that a run's config pickles to a worker process.)
MeasureConfig = dataclasses.make_dataclass(
    "MeasureConfig", [(m.name, bool, True) for m in TABLE],
    namespace={"__module__": __name__, "__doc__": "Which of the end-of-run measurements (TABLE) a run makes."})

# The presets of the config group `measure` (lm/settings/config.py registers them with Hydra): every switch on or off.
PRESETS = {"all": True, "none": False}


def preset(name: str) -> dict[str, bool]:
    """The `measure` section that `measure=<name>` composes: every entry's switch, on for all and off for none."""
    return {m.name: PRESETS[name] for m in TABLE}


def switched_off(measure_config) -> list[str]:
    """The names of the measurements a run's `measure` section turns off, in the table's order."""
    return [m.name for m in TABLE if not getattr(measure_config, m.name)]


def not_measured_tag(off: list[str]) -> str | None:
    """The run's `not_measured` tag: each pattern a switched-off measurement would log, with the switch that stopped
    it; None when the run measures everything."""
    out = {p: f"measure.{name}=false" for name in off for p in BY_NAME[name].provides}
    return json.dumps(out) if out else None


def with_made(tag: str | None, name: str, made: bool) -> str | None:
    """A `not_measured` tag (another run's, copied) with one measurement's patterns as this run made it or not."""
    out = {p: switch for p, switch in (json.loads(tag) if tag else {}).items() if p not in BY_NAME[name].provides}
    if not made:
        out.update(json.loads(not_measured_tag([name])))
    return json.dumps(out) if out else None


def why_not_measured(tag: str | None, key: str) -> str | None:
    """The switch that kept `key` (a metric or an artifact) from being measured, read from a run's tag."""
    for pattern, switch in (json.loads(tag) if tag else {}).items():
        if fnmatch.fnmatchcase(key, pattern):
            return switch
    return None
