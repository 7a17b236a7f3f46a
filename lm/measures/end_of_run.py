"""A run's end-of-run measurements: one function per entry of lm/settings/measures.py's TABLE, named as the entry and
marked @measurement, each reading the trained model from an EndOfRun and adding what it measured to it, which the
run then logs in one call each (the metrics at the last step, the artifacts from one folder). The run makes the ones
its `measure` section leaves on, in the table's order."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from lm.heads.measure import head_statistics
from lm.heads.summary import headline
from lm.knockout import measure as knockout_measure
from lm.knockout import summary as knockout_summary
from lm.measures import model_flavor, probes
from lm.model.data import Corpus, val_batches
from lm.model.model import GPT
from lm.settings.config import RunConfig
from lm.settings.measures import BY_NAME
from lm.tracking.datasets import log_corpus
from lm.tracking.store import Store


@dataclass
class EndOfRun:
    """What the measurements read (the run, its trained model, its validation windows) and what they fill."""
    cfg: RunConfig
    corpus: Corpus
    model: GPT                  # eval mode, on the CPU
    val_batches: list
    store: Store
    run_id: str
    folder: Path                # the artifacts, logged in one call once every measurement has written its files
    skipped: dict[str, str]     # what this corpus cannot answer (probes.not_applicable), by the names it logs
    by_position: list[float]    # the final validation's loss at each position of the window
    metrics: dict = field(default_factory=dict)   # logged at the run's last step
    tags: dict = field(default_factory=dict)
    heads: pd.DataFrame | None = None             # the head statistics' table, which knock-out reads
    probe: list | None = None                     # the probe's top characters, for the run's summary
    sample: str | None = None                     # the first sample, for the run's summary
    by_position_se: list[float] = field(default_factory=list)   # its standard error over the validation windows


# Each entry of lm/settings/measures.py's TABLE, by its name: the function below of that name.
MEASURE: dict[str, Callable[[EndOfRun], None]] = {}


def measurement(function: Callable[[EndOfRun], None]) -> Callable[[EndOfRun], None]:
    """A function of this module that makes the measurement its name names in lm/settings/measures.py's TABLE."""
    if function.__name__ not in BY_NAME:
        raise LookupError(f"end_of_run.{function.__name__}: lm/settings/measures.py's TABLE has no entry of that name")
    MEASURE[function.__name__] = function
    return function


@measurement
def probe(end: EndOfRun) -> None:
    if "probe_top1" in end.skipped:
        return
    found = probes.probe(end.model, end.corpus, end.cfg.data.probe)
    end.probe = found["top"]
    end.metrics["probe_top1_p"] = found["top"][0][1]
    # lesson 000's "'e' 65%, 'r' 8%, 'l' 8%": each lowercase letter's probability by name
    end.metrics.update({f"probe_p_{c}": p for c, p in found["letters"].items()})
    # "the likeliest is 'e'" as a number each seed gives: each letter's lead over the likeliest other character
    end.metrics.update({f"probe_lead_{c}": x for c, x in found["leads"].items()})
    end.tags["probe_top1"] = found["top"][0][0]
    (end.folder / "probe.json").write_text(probes.to_json(found), encoding="utf-8")


@measurement
def score_array(end: EndOfRun) -> None:
    end.metrics["score_array_size"] = probes.score_array_size(end.model, end.cfg.train.batch_size)


@measurement
def train_loss(end: EndOfRun) -> None:
    """Lesson 002's "step 2500 | train 1.562 | val 1.746": the loss on fixed windows of the training text."""
    e, T = end.cfg.eval, end.cfg.model.block_size
    batches = val_batches(end.corpus, e.val_batches, e.val_batch_size, T, split="train")
    end.metrics["train_eval_loss"] = probes.validation(end.model, batches)["val_loss"]


@measurement
def shuffle(end: EndOfRun) -> None:
    end.metrics["shuffle_change"] = probes.shuffle_change(end.model, end.val_batches[0][0])


@measurement
def samples(end: EndOfRun) -> None:
    s = end.cfg.sample
    found = probes.samples(end.model, end.corpus, end.cfg.data.sample_prompt, s.length, s.temperature, s.count, s.seed)
    end.metrics.update(found["scores"])
    end.sample = found["texts"][0]
    (end.folder / "samples.txt").write_text("\n\n---\n\n".join(found["texts"]), encoding="utf-8")


@measurement
def heads(end: EndOfRun) -> None:
    e = end.cfg.eval
    end.heads = head_statistics(end.model, end.corpus, end.val_batches, e.head_windows, e.head_skip)
    end.metrics.update(headline(end.heads))
    start = probes.untrained(end.cfg.model, end.cfg.seed)
    end.metrics["heads_attention_change"] = probes.attention_change(end.model, start, end.val_batches, e.head_windows)
    end.heads.to_csv(end.folder / "heads.csv", index=False)


@measurement
def knockout(end: EndOfRun) -> None:
    table = knockout_measure.knockout(end.model, knockout_measure.windows(end.val_batches))
    end.metrics.update(knockout_summary.headline(table, end.heads))
    table.to_csv(end.folder / "knockout.csv", index=False)


@measurement
def attention(end: EndOfRun) -> None:
    line = end.cfg.data.heatmap_line if "attention.json" not in end.skipped else None
    if line is not None:
        found = probes.attention_on(end.model, end.corpus, line)
        (end.folder / "attention.json").write_text(probes.to_json(found))
        if end.corpus.documents:  # lesson 001's question on a name's last letter; lesson 000's line asks none
            end.metrics.update(probes.last_row_reads(found))
    lines = probes.attention_lines(end.model, end.corpus, line)
    (end.folder / "attention_lines.json").write_text(probes.to_json(lines, compact=True), encoding="utf-8")


@measurement
def softmax_questions(end: EndOfRun) -> None:
    end.metrics.update({**probes.softmax_questions(), **probes.randn_d64()})


# Windows enough for an exact check (the mask's zeros, a part's count) or a mean over thousands of rows, and few
# enough that a backward pass through the analysis path stays a tenth of a second.
MASK_WINDOWS, INIT_WINDOWS = 4, 32


@measurement
def mask(end: EndOfRun) -> None:
    x, y = (t[:MASK_WINDOWS] for t in end.val_batches[0])
    end.metrics.update(probes.mask_checks(end.model, x, y))


@measurement
def parameter_terms(end: EndOfRun) -> None:
    end.metrics.update(probes.parameter_terms(end.model))


@measurement
def score_array_math(end: EndOfRun) -> None:
    end.metrics["score_array_size_math"] = probes.score_array_size_math(end.model, end.cfg.train.batch_size)


@measurement
def init_softmax(end: EndOfRun) -> None:
    """On the model the run started from (built again from its seed): sqrtd's slopes, and its shares by row length
    as series over the number of keys (2 … context), with `keys` beside them for a chart's x axis."""
    x, y = (t[:INIT_WINDOWS] for t in end.val_batches[0])
    found = probes.init_softmax(probes.untrained(end.cfg.model, end.cfg.seed), x, y)
    for name in ("onehot", "gap8"):
        end.store.log_series(end.run_id, f"init_{name}_share_by_keys", found.pop(f"{name}_by_keys"), 2)
    end.store.log_series(end.run_id, "keys", range(2, x.size(1) + 1), 2)
    end.metrics.update(found)


@measurement
def loss_by_position(end: EndOfRun) -> None:
    end.store.log_series(end.run_id, "val_loss_at_position", end.by_position)
    end.store.log_series(end.run_id, "val_loss_at_position_se", end.by_position_se)
    # each point's position, at its step: a chart drawn against it names its x axis (MLflow's runs page cannot
    # relabel "Step": lm/tracking/views.py)
    end.store.log_series(end.run_id, "position", range(len(end.by_position)))
    (end.folder / "loss_by_position.json").write_text(probes.to_json(end.by_position))


@measurement
def mlflow_model(end: EndOfRun) -> None:
    model_flavor.log(end.store, end.run_id, end.model, end.corpus.chars, end.corpus.bos)


@measurement
def datasets(end: EndOfRun) -> None:
    log_corpus(end.store.client, end.run_id, end.cfg.data, end.corpus)


_missing = BY_NAME.keys() - MEASURE.keys()
if _missing:
    raise LookupError(f"lm/settings/measures.py's TABLE has {', '.join(sorted(_missing))}, and no @measurement "
                      f"function of that name here")
