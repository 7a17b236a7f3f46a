"""The tracking store seen without MLflow: where it is, whether a server lets this login in, whether a run is in it,
by the lightest call that tells (one SQLite query on the local file, or a request to a server's REST API); and its
URI as it may be shown, the password hidden.

Importing MLflow takes 1.5 s; a command asked for a run that does not exist says so before it pays for that.
"""
import base64
import http.client
import json
import os
import re
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from lm.settings.errors import TrackingError


# The project's checkout: a written page names a local store inside it by its path from here.
CHECKOUT = Path(__file__).resolve().parents[2]


def default_store() -> Path:
    return Path(os.environ.get("TINYGPT_STORE", Path.cwd() / "mlruns")).expanduser().resolve()


def resolve_uri(uri: str | None = None) -> str:
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{default_store() / 'mlflow.db'}"


# The password of a URI's user (scheme://user:PASSWORD@host), wherever the URI stands in a text.
_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^/\s:@]*):(?P<password>[^/\s@]*)@", re.IGNORECASE)


def redact(text: str) -> str:
    """text with the password of every URI in it shown as ***: what is printed, logged as a param or tag, or
    written into an artifact or a job log goes through here (postgresql+psycopg2://user:***@host/db)."""
    return _PASSWORD.sub(lambda m: f"{m['head']}:***@", text)


def shown(uri: str, root: Path = CHECKOUT) -> str:
    """A store as a written page names it, with no path of this machine in it (a page is read on other machines): a
    local SQLite store by its path from the checkout (`mlruns/mlflow.db`), or, outside the checkout, by its folder
    and file and its kind (`mlruns/mlflow.db (SQLite, outside the checkout)`); any other store by its URI, the
    password hidden."""
    db = sqlite_file(uri)
    if db is None:
        return redact(uri)
    db = Path(os.path.abspath(db))
    try:
        return db.relative_to(root.resolve()).as_posix()
    except ValueError:
        return f"{Path(db.parent.name, db.name).as_posix()} (SQLite, outside the checkout)"


def login(uri: str) -> tuple[str, dict[str, str], str | None]:
    """A server's URL without its user's login, the HTTP headers that log in (the login in the URI, else
    MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, as MLflow's client does), and where that login came from."""
    parts = urllib.parse.urlsplit(uri)
    if parts.username is not None:
        user, password, source = (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""),
                                  "the URI")
        uri = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    elif os.environ.get("MLFLOW_TRACKING_USERNAME"):
        user, password = os.environ["MLFLOW_TRACKING_USERNAME"], os.environ.get("MLFLOW_TRACKING_PASSWORD", "")
        source = "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD"
    else:
        return uri.rstrip("/"), {}, None
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return uri.rstrip("/"), {"Authorization": f"Basic {token}"}, f"{source} (user {user})"


def check_server(uri: str) -> None:
    """For a server's URI: /health says a server is there; one API call says it lets this client in (it may refuse
    the host name the client knows it by, or want a login, or refuse the one given). A TrackingError in one line
    otherwise, before any heavy import. Any other URI: nothing to check here."""
    if not uri.startswith(("http://", "https://")):
        return
    shown = redact(uri)
    base, headers, who = login(uri)
    api = f"{base}/api/2.0/mlflow/experiments/get-by-name?experiment_name=Default"
    url = f"{base}/health"
    try:
        for url in (f"{base}/health", api):
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as r:
                    r.read()
            except urllib.error.HTTPError as e:
                if url == api and e.code == 404 and "RESOURCE_DOES_NOT_EXIST" in e.read(500).decode(errors="replace"):
                    continue  # a tracking server without that experiment: it answered, and let us in
                raise
    except urllib.error.HTTPError as e:  # something answered, but not as a tracking server that lets us in
        body = " ".join(e.read(200).decode(errors="replace").split())
        body = "" if body.startswith("<") else body[:120]  # an HTML error page says no more than its code
        if e.code == 401:
            hint = (f"it refused the login in {who}" if who else
                    "it wants a login: set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD")
        elif e.code in (400, 403) and "host" in body.lower():
            hint = ("it refuses the host name this client uses; start the server with --allowed-hosts "
                    f"{urllib.parse.urlsplit(base).netloc}")
        else:
            hint = "not an MLflow tracking server that this client may use"
        what = "/health" if url.endswith("/health") else "an API call"
        raise TrackingError(f"{shown} answered HTTP {e.code} ({body or e.reason}) to {what}: {hint}") from None
    except (OSError, ValueError, http.client.HTTPException) as e:  # refused, no such host, timed out, bad URI
        why = redact(str(getattr(e, "reason", None) or e))
        raise TrackingError(f"cannot reach the MLflow server at {shown} ({why}); start it, or unset "
                            f"MLFLOW_TRACKING_URI to use the local store") from None


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


def sqlite_file(uri: str) -> Path | None:
    """The database file of a local SQLite store's URI; None for any other store."""
    return Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None


def is_new(uri: str) -> bool:
    """A local SQLite store whose file is not there yet: every run of a suite on it is still to do."""
    db = sqlite_file(uri)
    return db is not None and not db.exists()


def run_record(uri: str, run_id: str) -> RunRecord | None:
    """The run's status and tags, or None if the store has no such run."""
    db = sqlite_file(uri)
    if db is not None:
        return _from_sqlite(db, run_id)
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
    base, headers, _ = login(uri)
    url = f"{base}/api/2.0/mlflow/runs/get?run_id={urllib.parse.quote(run_id)}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as r:
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
