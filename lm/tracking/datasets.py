"""The corpus a run trains and validates on, as MLflow dataset inputs: the runs table's Dataset column.

Each split is one dataset (MLflow keeps one input per name and digest, so the two splits need names of their own):
`shakespeare/train` with context `training` and `shakespeare/validation` with context `validation`. The source is
the pinned URL, or the file itself when the run read a file of the user's own (data.path). MLflow caps a
dataset's digest at 36 characters, so the digest is the SHA-256's first 12 hex digits (as the project's messages
show it); the whole SHA-256 is in the dataset's profile.
"""
import json
import time
from pathlib import Path

from mlflow.data.http_dataset_source import HTTPDatasetSource
from mlflow.data.meta_dataset import MetaDataset
from mlflow.data.sources import LocalArtifactDatasetSource
from mlflow.entities import Dataset, DatasetInput, InputTag
from mlflow.exceptions import MlflowException
from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

from lm.model import data

SPLITS = {"train": "training", "validation": "validation"}  # split → MLflow's context tag


def corpus_file(c: data.DataConfig) -> tuple[Path, str]:
    """The file a run reads and its SHA-256, from the data config: data.path, $TINYGPT_DATA_DIR or the cache."""
    path = Path(c.path).expanduser() if c.path else data.locate(c)
    return path.resolve(), c.sha256 or data.sha256(path)


def inputs(c: data.DataConfig, corpus: data.Corpus) -> list[DatasetInput]:
    path, digest = corpus_file(c)
    source = LocalArtifactDatasetSource(str(path)) if c.path or not c.url else HTTPDatasetSource(c.url)
    out = []
    for split, context in SPLITS.items():
        size = len(corpus.train if split == "train" else corpus.val)
        profile = {"sha256": digest, "file": str(path), "split": split, "val_fraction": c.val_fraction,
                   ("documents" if corpus.documents else "characters"): size}
        meta = MetaDataset(source, name=f"{c.corpus}/{split}", digest=digest[:12])
        entity = meta._to_mlflow_entity()
        out.append(DatasetInput(Dataset(entity.name, entity.digest, entity.source_type, entity.source,
                                        profile=json.dumps(profile)),
                                tags=[InputTag(MLFLOW_DATASET_CONTEXT, context)]))
    return out


def log_corpus(client, run_id: str, c: data.DataConfig, corpus: data.Corpus) -> None:
    """The run's two dataset inputs; logging them again (a resumed run) adds nothing. Two workers that log the same
    new dataset into one experiment at once race to create it in the store (a UNIQUE constraint in SQLite; seen in
    the quick suite): the loser logs again, and finds it made."""
    for attempt in range(3):
        try:
            client.log_inputs(run_id, datasets=inputs(c, corpus))
            return
        except MlflowException as e:
            if "UNIQUE constraint" not in str(e) or attempt == 2:
                raise
            time.sleep(0.2)
