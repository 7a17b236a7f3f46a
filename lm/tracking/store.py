"""The MLflow store: where it is, whether it can be used, and runs created and logged in bulk."""
import contextlib
import fcntl
import logging
import os
import re
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import mlflow
from mlflow.entities import Metric, Param, RunStatus, RunTag
from mlflow.tracking import MlflowClient
from mlflow.tracking._tracking_service import utils as mlflow_uri

from lm import faults
from lm.settings.errors import TrackingError  # noqa: F401  (raised here, caught before MLflow is imported)
from lm.tracking.store_check import RunRecord
from lm.tracking.store_check import check_server, default_store, redact, resolve_uri, sqlite_file  # noqa: F401
from lm.tracking import reference

PROJECT = Path(__file__).resolve().parents[2]
# What every experiment the project creates is, in MLflow's own tag (its UI's experiment-type selector writes it).
# MLflow 3.17's UI reads its sidebar switch instead, so the links `make ui` prints set that too (lm/tracking/views.py).
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}


def _quiet_mlflow() -> None:
    # The SQLite store announces every migration step, and downloads draw bars; a run's output is for the run.
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    for name in ("alembic", "mlflow.store.db.utils", "mlflow.tracking.fluent", "mlflow.store.sqlalchemy"):
        logging.getLogger(name).setLevel(logging.WARNING)


PAGE = 10_000  # runs per search_runs call: MLflow caps one call at 50,000, and returns the newest first


def every_run(client: MlflowClient, experiment_ids: list[str], filter_string: str = "",
              order_by: list[str] | None = None) -> list:
    """Every run that matches, page after page: one search_runs call returns at most max_results runs, the newest
    first, so past that many an experiment's oldest runs (the suite's parent run first) would be silently left out."""
    runs, token = [], None
    while True:
        page = client.search_runs(experiment_ids, filter_string, max_results=PAGE, order_by=order_by,
                                  page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def finished_runs(client: MlflowClient, experiment: str) -> list:
    """An experiment's finished runs of its variants (`make heads EXERCISE=...`'s), every page of them."""
    exp = client.get_experiment_by_name(experiment)
    return [] if exp is None else every_run(client, [exp.experiment_id],
                                            "attributes.status = 'FINISHED' and tags.variant != ''")


def every_experiment(client: MlflowClient) -> list:
    """Every active experiment, page after page (one search_experiments call returns at most 1,000)."""
    found, token = [], None
    while True:
        page = client.search_experiments(max_results=1000, page_token=token)
        found.extend(page)
        token = page.token
        if not token:
            return found


@contextlib.contextmanager
def pointed_at(uri: str):
    """MLflow's process-wide store set to uri for a block, then put back exactly as it was found. Setting it also
    writes MLFLOW_TRACKING_URI into the environment (for subprocesses), and MLflow's own `_use_tracking_uri` puts
    back only its global: a URI that Lightning's logger set earlier in the process would come back into the
    environment and become every later command's store (a test caught a suite writing into another's store)."""
    env = os.environ.get("MLFLOW_TRACKING_URI")
    before = mlflow_uri._tracking_uri
    try:
        mlflow.set_tracking_uri(uri)
        yield
    finally:
        mlflow.set_tracking_uri(before)
        if env is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = env


class Store:
    """One tracking store, checked on opening: a local SQLite file that can be written, or a server that answers."""

    def __init__(self, uri: str | None = None, checkpoint_dir: str | None = None):
        self.uri = resolve_uri(uri)
        self.local_dir: Path | None = None
        db = sqlite_file(self.uri)
        if db is not None:
            self.local_dir = db.parent
            self._check_writable(self.local_dir)
        elif self.uri.startswith(("http://", "https://")):
            check_server(self.uri)
            # MLflow prints two "View run … at" lines whenever a run on a server ends: dozens a suite, through its bar.
            os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
        elif "://" not in self.uri or self.uri.startswith("file:"):
            raise TrackingError(f"tracking URI {self.shown!r} is a plain folder, which MLflow 3 no longer stores runs "
                                f"in; use sqlite:///path/to/mlflow.db or an http:// server")
        base = Path(checkpoint_dir) if checkpoint_dir else (self.local_dir or Path.home() / ".cache/tinygpt") / "checkpoints"
        self.checkpoint_dir = base.expanduser()
        _quiet_mlflow()
        self.client = self._open()
        self._logged_points: dict[str, set[tuple[str, int]]] = {}  # a resumed run's id → (metric, step) it has

    def _open(self) -> MlflowClient:
        """The client, its database created or upgraded by one process at a time: two suites started at once on a
        new store would otherwise both run MLflow's migrations, and one would fail half way."""
        try:
            if self.local_dir is None:
                return MlflowClient(self.uri)
            folder = os.open(self.local_dir, os.O_RDONLY)  # the lock is on the store's folder: no file of its own
            try:
                fcntl.flock(folder, fcntl.LOCK_EX)
                return MlflowClient(self.uri)
            finally:
                os.close(folder)
        except Exception as e:  # not an MLflow database, or one from a newer MLflow
            why = (str(getattr(e, "orig", None) or e).strip().splitlines() or [type(e).__name__])[0][:200]
            raise TrackingError(f"cannot open the tracking store {self.shown} ({redact(why)}); point TINYGPT_STORE or "
                                f"MLFLOW_TRACKING_URI at a good one") from None

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

    @property
    def shown(self) -> str:
        """The URI as it may be printed or logged: its password, if it has one, as ***."""
        return redact(self.uri)

    @property
    def artifact_root(self) -> str | None:
        # Beside the SQLite file, whatever the working folder; a server decides for itself.
        return (self.local_dir / "artifacts").as_uri() if self.local_dir else None

    def experiment_id(self, name: str) -> str:
        exp = self.client.get_experiment_by_name(name)
        if exp is not None:
            if exp.lifecycle_stage == "deleted":
                self.client.restore_experiment(exp.experiment_id)
            for key, value in EXPERIMENT_KIND.items():
                if exp.tags.get(key) != value:  # a store made before the tag
                    self.client.set_experiment_tag(exp.experiment_id, key, value)
            return exp.experiment_id
        # A folder of its own under the root whatever the name: `..` or `.` would put it beside or on the root.
        folder = re.sub(r"[^\w.-]+", "-", name.replace("/", "-"), flags=re.ASCII).strip(".") or "experiment"
        location = f"{self.artifact_root}/{folder}" if self.artifact_root else None
        try:
            return self.client.create_experiment(name, artifact_location=location, tags=EXPERIMENT_KIND)
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

    def resume(self, run_id: str) -> None:
        """From here on, a point this run already has (the same metric at the same step) is not logged again. A run
        trained again in place after a kill recomputes what it logged before, with the same numbers; its history
        keeps one point per step whichever moment the kill came at."""
        keys = self.client.get_run(run_id).data.metrics
        self._logged_points[run_id] = {(k, m.step) for k in keys for m in self.client.get_metric_history(run_id, k)}

    def run_record(self, run_id: str) -> RunRecord | None:
        """The run's status and tags, through MLflow's client; None if the store has no such run."""
        try:
            run = self.client.get_run(run_id)
        except mlflow.exceptions.MlflowException:
            return None
        return RunRecord(run_id, run.info.status, run.data.tags)

    def logged(self, run_id: str, key: str, step: int) -> bool:
        """Whether a resumed run has this point already."""
        return (key, step) in self._logged_points.get(run_id, ())

    def log_points(self, run_id: str, points: list[Metric]) -> None:
        known = self._logged_points.get(run_id)
        if known is not None:
            points = [p for p in points if (p.key, p.step) not in known]
        for i in range(0, len(points), 1000):  # MLflow takes at most 1,000 metrics a call
            faults.point("logging")
            self.client.log_batch(run_id, metrics=points[i:i + 1000])
            if known is not None:
                known.update((p.key, p.step) for p in points[i:i + 1000])

    def copy_results(self, source: str, run_id: str, keep: set[str]):
        """Every metric point (but the lessons' series the source's exercise charts beside it: lm/tracking/reference.py),
        tag (but those in `keep` and MLflow's own) and artifact of `source`, into run_id. Returns the source run."""
        self.resume(run_id)  # a copy interrupted before: what it logged is not logged twice
        run = self.client.get_run(source)
        self.log_points(run_id, [m for k in run.data.metrics if not k.startswith(reference.PREFIX)
                                 for m in self.client.get_metric_history(source, k)])
        self.set_tags(run_id, {k: v for k, v in run.data.tags.items() if not k.startswith("mlflow.") and k not in keep})
        self.client.log_inputs(run_id, datasets=run.inputs.dataset_inputs)  # the corpus it was trained on
        with tempfile.TemporaryDirectory() as tmp:
            self.client.log_artifacts(run_id, self.client.download_artifacts(source, "", tmp))
        return run

    def log_params(self, run_id: str, params: dict[str, object]) -> None:
        self.client.log_batch(run_id, params=[Param(k, str(v)) for k, v in params.items()])

    def set_tags(self, run_id: str, tags: dict[str, object]) -> None:
        self.client.log_batch(run_id, tags=[RunTag(k, str(v)) for k, v in tags.items()])

    def end_run(self, run_id: str, status: str, reason: str | None = None, end_time: int | None = None) -> None:
        """The run ended: now, or at end_time (ms since the epoch)."""
        if reason:
            self.client.set_tag(run_id, "failure_reason", reason[:4000])
        elif status == "FINISHED" and "failure_reason" in self.client.get_run(run_id).data.tags:
            self.client.delete_tag(run_id, "failure_reason")  # an interrupted attempt's: this one finished
        self.client.set_terminated(run_id, status, end_time)

    def mark_running(self, run_id: str) -> None:
        self.client.update_run(run_id, status=RunStatus.to_string(RunStatus.RUNNING))


def duration(ms: int) -> str:
    """A run's Duration as MLflow's runs table writes it: 850ms, 3.2s, 1.4min, 1.6h."""
    for unit, size in (("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size:
            return f"{ms / size:.1f}{unit}"
    return f"{ms}ms"


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
