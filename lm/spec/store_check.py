"""The tracking store seen without MLflow: where it is, and whether a run is in it, by the lightest call that
tells (one SQLite query on the local file, or one request to a server's REST API).

Importing MLflow takes 1.5 s; a command asked for a run that does not exist says so before it pays for that.
"""
import json
import os
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path


def default_store() -> Path:
    return Path(os.environ.get("TINYGPT_STORE", Path.cwd() / "mlruns")).expanduser().resolve()


def resolve_uri(uri: str | None = None) -> str:
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{default_store() / 'mlflow.db'}"


class CannotTell(Exception):
    """The light look-up cannot say (another kind of store, a server that refuses, a file that is not a
    database): the command opens the store with MLflow, which says what is wrong."""


@dataclass
class RunRecord:
    run_id: str
    status: str
    tags: dict[str, str]
    artifact_uri: str = ""

    @property
    def artifacts(self) -> Path | None:
        """The run's artifact folder, where it is a local one."""
        if not self.artifact_uri.startswith("file://"):
            return None
        return Path(urllib.parse.unquote(urllib.parse.urlsplit(self.artifact_uri).path))


def run_record(uri: str, run_id: str) -> RunRecord | None:
    """The run's status and tags, or None if the store has no such run."""
    if uri.startswith("sqlite:///"):
        return _from_sqlite(Path(uri.removeprefix("sqlite:///")), run_id)
    if uri.startswith(("http://", "https://")):
        return _from_server(uri, run_id)
    raise CannotTell(uri)


def _from_sqlite(db: Path, run_id: str) -> RunRecord | None:
    if not db.is_file():
        return None  # no store yet, so no run in it (and none is created by asking)
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            row = con.execute("SELECT status, artifact_uri FROM runs WHERE run_uuid = ?", (run_id,)).fetchone()
            if row is None:
                return None
            tags = dict(con.execute("SELECT key, value FROM tags WHERE run_uuid = ?", (run_id,)).fetchall())
    except sqlite3.Error as e:
        raise CannotTell(str(e)) from None
    return RunRecord(run_id, row[0], tags, row[1] or "")


def _from_server(uri: str, run_id: str) -> RunRecord | None:
    url = f"{uri.rstrip('/')}/api/2.0/mlflow/runs/get?run_id={urllib.parse.quote(run_id)}"
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            run = json.load(r)["run"]
    except urllib.error.HTTPError as e:
        body = e.read(500).decode(errors="replace")
        if e.code in (400, 404) and ("RESOURCE_DOES_NOT_EXIST" in body or "INVALID_PARAMETER_VALUE" in body):
            return None
        raise CannotTell(f"HTTP {e.code}") from None
    except (OSError, ValueError, KeyError) as e:
        raise CannotTell(str(e)) from None
    tags = {t["key"]: t.get("value", "") for t in run.get("data", {}).get("tags", [])}
    return RunRecord(run_id, run["info"]["status"], tags, run["info"].get("artifact_uri", ""))
