"""The MLflow store: where it is, whether it can be used, and runs created and logged in bulk."""
import logging
import os
import subprocess
import time
import urllib.request
from pathlib import Path

from mlflow.entities import Metric, RunStatus, RunTag
from mlflow.tracking import MlflowClient
from pytorch_lightning.loggers import MLFlowLogger

from lm import faults

PROJECT = Path(__file__).resolve().parent.parent


class TrackingError(RuntimeError):
    """A tracking store that cannot be reached or written; the message says what to do."""


def default_store() -> Path:
    return Path(os.environ.get("TINYGPT_STORE", Path.cwd() / "mlruns")).expanduser().resolve()


def resolve_uri(uri: str | None = None) -> str:
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{default_store() / 'mlflow.db'}"


def _quiet_mlflow() -> None:
    # The SQLite store announces every migration step; a run's output is for the run.
    for name in ("alembic", "mlflow.store.db.utils", "mlflow.tracking.fluent", "mlflow.store.sqlalchemy"):
        logging.getLogger(name).setLevel(logging.WARNING)


class Store:
    """One tracking store, checked on opening: a local SQLite file that can be written, or a server that answers."""

    def __init__(self, uri: str | None = None, checkpoint_dir: str | None = None):
        self.uri = resolve_uri(uri)
        self.local_dir: Path | None = None
        if self.uri.startswith("sqlite:///"):
            self.local_dir = Path(self.uri.removeprefix("sqlite:///")).parent
            self._check_writable(self.local_dir)
        elif self.uri.startswith(("http://", "https://")):
            self._check_server()
        elif "://" not in self.uri or self.uri.startswith("file:"):
            raise TrackingError(f"tracking URI {self.uri!r} is a plain folder, which MLflow 3 no longer stores runs "
                                f"in; use sqlite:///path/to/mlflow.db or an http:// server")
        base = Path(checkpoint_dir) if checkpoint_dir else (self.local_dir or Path.home() / ".cache/tinygpt") / "checkpoints"
        self.checkpoint_dir = base.expanduser()
        _quiet_mlflow()
        self.client = MlflowClient(self.uri)

    @staticmethod
    def _check_writable(folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / f".write-test-{os.getpid()}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as e:
            raise TrackingError(f"the tracking store folder {folder} is not writable ({e.strerror}); "
                                f"set TINYGPT_STORE or MLFLOW_TRACKING_URI to somewhere that is") from None

    def _check_server(self) -> None:
        try:
            with urllib.request.urlopen(f"{self.uri.rstrip('/')}/health", timeout=5) as r:
                r.read()
        except OSError as e:
            raise TrackingError(f"cannot reach the MLflow server at {self.uri} ({getattr(e, 'reason', e)}); "
                                f"start it, or unset MLFLOW_TRACKING_URI to use the local store") from None

    @property
    def artifact_root(self) -> str | None:
        # Beside the SQLite file, whatever the working folder; a server decides for itself.
        return (self.local_dir / "artifacts").as_uri() if self.local_dir else None

    def experiment_id(self, name: str) -> str:
        exp = self.client.get_experiment_by_name(name)
        if exp is not None:
            if exp.lifecycle_stage == "deleted":
                self.client.restore_experiment(exp.experiment_id)
            return exp.experiment_id
        location = f"{self.artifact_root}/{name.replace('/', '-')}" if self.artifact_root else None
        try:
            return self.client.create_experiment(name, artifact_location=location)
        except Exception:  # another process created it first
            return self.client.get_experiment_by_name(name).experiment_id

    def create_run(self, experiment: str, name: str, tags: dict[str, str], parent: str | None = None) -> str:
        tags = {**tags, "mlflow.source.git.commit": git_commit(), "mlflow.source.name": "tinygpt-ablations"}
        if parent:
            tags["mlflow.parentRunId"] = parent
        run = self.client.create_run(self.experiment_id(experiment), run_name=name,
                                     tags={k: str(v) for k, v in tags.items()})
        return run.info.run_id

    def log_metrics(self, run_id: str, metrics: dict[str, float], step: int = 0) -> None:
        now = int(time.time() * 1000)
        self.log_points(run_id, [Metric(k, float(v), now, step) for k, v in metrics.items()])

    def log_series(self, run_id: str, key: str, values, start_step: int = 0) -> None:
        now = int(time.time() * 1000)
        self.log_points(run_id, [Metric(key, float(v), now, start_step + i) for i, v in enumerate(values)])

    def log_points(self, run_id: str, points: list[Metric]) -> None:
        for i in range(0, len(points), 1000):  # MLflow takes at most 1,000 metrics a call
            faults.point("logging")
            self.client.log_batch(run_id, metrics=points[i:i + 1000])

    def set_tags(self, run_id: str, tags: dict[str, object]) -> None:
        self.client.log_batch(run_id, tags=[RunTag(k, str(v)) for k, v in tags.items()])

    def end_run(self, run_id: str, status: str, reason: str | None = None) -> None:
        if reason:
            self.client.set_tag(run_id, "failure_reason", reason[:4000])
        self.client.set_terminated(run_id, status)

    def mark_running(self, run_id: str) -> None:
        self.client.update_run(run_id, status=RunStatus.to_string(RunStatus.RUNNING))


class RunLogger(MLFlowLogger):
    """Lightning's MLflow logger, attached to a run the harness created. Lightning would mark the run FINISHED
    when fitting ends; here it ends only after the run's last measurement is logged."""

    def finalize(self, status: str = "success") -> None:
        pass


_commit: str | None = None


def git_commit() -> str:
    global _commit
    if _commit is None:
        try:
            out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT, capture_output=True, text=True, timeout=5)
            _commit = out.stdout.strip() or "unknown"
            dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=PROJECT,
                                   capture_output=True, text=True, timeout=5).stdout.strip()
            _commit += "-dirty" if dirty else ""
        except OSError:
            _commit = "unknown"
    return _commit
