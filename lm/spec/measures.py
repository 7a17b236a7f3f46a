"""What a run measures once it has trained: one entry per measurement, the table that the run's measurements
(lm/measures/end_of_run.py), their switches (conf/measure/, `measure.<name>=false`), the run's `not_measured` tag
and the report's "not measured" all read. A new measurement is one entry here, one field of MeasureConfig
(lm/spec/schema.py) and one function in lm/measures/end_of_run.py.

The final validation loss, its curve and the checkpoint `model.pt` are not in the table: every run makes them,
since the suite, `make sample`, the temperature exercise and every claim about the loss read them.
"""
import fnmatch
import json
from dataclasses import dataclass
from enum import Enum


class Measure(str, Enum):
    PROBE = "probe"
    SCORE_ARRAY = "score_array"
    TRAIN_LOSS = "train_loss"
    SHUFFLE = "shuffle"
    SAMPLES = "samples"
    HEADS = "heads"
    KNOCKOUT = "knockout"
    ATTENTION = "attention"
    LOSS_BY_POSITION = "loss_by_position"
    MLFLOW_MODEL = "mlflow_model"
    DATASETS = "datasets"


@dataclass(frozen=True)
class Measurement:
    measure: Measure
    what: str
    provides: tuple[str, ...]   # the metrics, tags and artifacts it logs, as fnmatch patterns


# In the order a run makes them: knock-out reads the head statistics' table to name the heads the claims compare.
TABLE = (
    Measurement(Measure.PROBE, "next-character probabilities after data.probe, every lowercase letter's by name",
                ("probe_top1", "probe_top1_p", "probe_p_*", "probe.json")),
    Measurement(Measure.SCORE_ARRAY, "one layer's score array as a training step holds it (0: fused kernels tile it)",
                ("score_array_size",)),
    Measurement(Measure.TRAIN_LOSS, "the loss on as many fixed windows of the training text as validation reads",
                ("train_eval_loss",)),
    Measurement(Measure.SHUFFLE, "block 1's attention output when the earlier characters are shuffled",
                ("shuffle_change",)),
    Measurement(Measure.SAMPLES, "sample.count samples, their word validity and shape",
                ("samples.txt", "word_validity*", "real_word_share*", "speaker_line_share*", "line_length*",
                 "short_word_validity")),
    Measurement(Measure.HEADS, "every head's statistics (lm/heads/table.py)", ("heads.csv", "heads_*")),
    Measurement(Measure.KNOCKOUT, "each head, attention and MLP knocked out on the validation windows",
                ("knockout.csv", "knockout_*")),
    Measurement(Measure.ATTENTION, "every head's weights on the heatmap line and a few more; of a name, where its "
                "last letter looks", ("attention.json", "attention_lines.json", "heatmap_last_*")),
    Measurement(Measure.LOSS_BY_POSITION, "the validation loss at each position of the window",
                ("loss_by_position.json", "val_loss_at_position")),
    Measurement(Measure.MLFLOW_MODEL, "the model in MLflow's PyTorch flavor (runs:/<id>/model)", ("model",)),
    Measurement(Measure.DATASETS, "the corpus's splits as MLflow datasets (the runs table's Dataset column)",
                ("dataset:*",)),
)
BY_MEASURE = {m.measure: m for m in TABLE}
TAG = "not_measured"


def switched_off(measure_config) -> list[Measure]:
    """The measurements a run's `measure` section turns off, in the table's order."""
    return [m.measure for m in TABLE if not getattr(measure_config, m.measure.value)]


def not_measured_tag(off: list[Measure]) -> str | None:
    """The run's `not_measured` tag: each pattern a switched-off measurement would log, with the switch that stopped
    it; None when the run measures everything."""
    out = {p: f"measure.{m.value}=false" for m in off for p in BY_MEASURE[m].provides}
    return json.dumps(out) if out else None


def why_not_measured(tag: str | None, key: str) -> str | None:
    """The switch that kept `key` (a metric or an artifact) from being measured, read from a run's tag."""
    for pattern, switch in (json.loads(tag) if tag else {}).items():
        if fnmatch.fnmatchcase(key, pattern):
            return switch
    return None
