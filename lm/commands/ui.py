"""`make ui`: MLflow's own UI over the project's store, on this machine only unless told otherwise.

    python -m lm.commands.ui [host=127.0.0.1] [port=5000] [server=[--workers,4]]   (lm/settings/options.py's UiOptions)

server=[...]: more `mlflow server` options, passed on as they are.

Serves the store training writes to (MLFLOW_TRACKING_URI, else TINYGPT_STORE, else ./mlruns/mlflow.db) with
`mlflow server`, artifacts included: the runs' files are read where the store keeps them, and experiments made
through the server keep theirs in the same folder. Checks the port first and prints the address to open, and
for each exercise two links that open on its runs (lm/tracking/views.py): the runs table with each variant's mean,
spread and seeds, and the seeds charted by variant. Served through lm/commands/ui_app.py: its first page is the
experiments list in model-training mode, with no assistant panel. With MLFLOW_TRACKING_URI a server, prints the links
into its UI.
"""
import errno
import ipaddress
import os
import socket
import sys
import urllib.request
from importlib.metadata import entry_points

from lm.settings import options
from lm.settings.errors import ConfigError
from lm.tracking.store_check import login, redact, resolve_uri, sqlite_file

LOOPBACK = "127.0.0.1"
APP = "tinygpt"


def address(host: str, port: int) -> str:
    shown = LOOPBACK if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port, or None if it can. Tried as the server binds (SO_REUSEADDR,
    as uvicorn does), so a port left in TIME_WAIT by the last server counts as free."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
    except socket.gaierror as e:
        return f"cannot serve on {host!r}: not an address of this machine ({e.strerror})"
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            try:  # is it already an MLflow server, a `make ui` left running?
                with urllib.request.urlopen(f"{address(host, port)}/health", timeout=2) as r:
                    answered = r.read().strip() == b"OK"
            except OSError:
                answered = False
            what = "an MLflow server is already answering there (open it)" if answered else "something else is using it"
            return f"port {port} on {host} is already in use: {what}; choose another: make ui PORT={port + 1}"
        if e.errno == errno.EACCES:
            return f"port {port} on {host} needs root; choose one above 1023: make ui PORT=5000"
        return f"cannot serve on {host}:{port} ({e.strerror})"
    return None


def runs_link(base: str, experiment_id: str) -> str:
    from lm.tracking.views import RUNS  # numpy, 0.1 s: the options and the port are answered before it

    return f"{base}/#/experiments/{experiment_id}/{RUNS}"


def exercise_links(uri: str, base: str) -> list[tuple[str, str, list[str]]]:
    """(experiment, its runs table, its charts views: its seeds by variant, then its variants charted apart, where it
    has them) for every experiment in the store."""
    from mlflow.tracking import MlflowClient  # MLflow, 3 s: the options and the port are answered before it

    from lm.tracking import views  # numpy, 0.1 s: the options and the port are answered before it
    from lm.tracking.store import every_experiment  # MLflow, 3 s: the options and the port are answered before it

    out = []
    for exp in sorted(every_experiment(MlflowClient(uri)), key=lambda e: e.name):
        if exp.name != "Default":
            charts = [views.link(base, exp, key) for key in (views.KEY, views.APART_KEY) if views.has_view(exp, key)]
            runs = views.link(base, exp, views.TABLE_KEY) if views.has_view(exp, views.TABLE_KEY) else \
                runs_link(base, exp.experiment_id)
            out.append((exp.name, runs, charts))
    return out


def command(uri: str, host: str, port: int, extra: list[str]) -> list[str]:
    # `python -m mlflow`, not the `mlflow` script: run from the project's folder, it imports this tree's
    # lm/commands/ui_app.py
    cmd = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri,
           "--host", host, "--port", str(port)]
    db = sqlite_file(uri)
    if db is not None:  # the runs' artifacts sit beside the database, in the store's folder
        artifacts = db.parent / "artifacts"
        cmd += ["--serve-artifacts", "--artifacts-destination", str(artifacts)]
    if not any(a == "--workers" or a.startswith("--workers=") or a == "-w" for a in extra):
        cmd += ["--workers", "1"]  # one person's browser; MLflow's default of 4 only slows the start
    if not any(a == "--app-name" or a.startswith("--app-name=") for a in extra):
        cmd += ["--app-name", APP]  # its page opens on the runs, not on GenAI pages (lm/commands/ui_app.py)
    return cmd + extra


def app_installed() -> bool:
    """Whether this environment registers lm/commands/ui_app.py with MLflow (pyproject.toml's entry point, written
    when the project is installed)."""
    return bool(entry_points(group="mlflow.app", name=APP))


def remote(uri: str) -> int:
    """MLFLOW_TRACKING_URI is a server, which serves its own UI: the links into it, or one line if it does not answer."""
    from lm.tracking.store import Store, TrackingError  # MLflow, 3 s: the options and the port are answered before it

    try:
        Store(uri)
    except TrackingError:
        print(f"error: MLFLOW_TRACKING_URI is the MLflow server {redact(uri)}, which serves its own UI, but it does not "
              f"answer (unset MLFLOW_TRACKING_URI to serve the local store)", file=sys.stderr)
        return 2
    base = login(uri)[0]  # the links without the login in the URI: the browser asks for it
    print(f"MLflow server {base} serves its own UI; each exercise's runs (and, below, its seeds charted by variant):")
    print_links(exercise_links(uri, base))
    return 0


def print_links(links: list[tuple[str, str, list[str]]]) -> None:
    width = max((len(name) for name, *_ in links), default=0)
    for name, runs, charts in links:
        print(f"    {name:<{width}}  {runs}" + "".join(f"\n    {'':<{width}}  {c}" for c in charts))
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    try:
        args = options.parse(options.UiOptions, sys.argv[1:] if argv is None else argv)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    host, extra = args.host.strip() or LOOPBACK, args.server
    uri = resolve_uri()
    if uri.startswith(("http://", "https://")):
        return remote(uri)
    if not uri.startswith(("sqlite:///", "postgresql", "mysql", "mssql")):
        print(f"error: cannot serve the tracking URI {redact(uri)!r}; use sqlite:///path/to/mlflow.db", file=sys.stderr)
        return 2
    if not 0 < args.port < 65536:
        print(f"error: port={args.port} is not a port (1-65535): make ui PORT=5001", file=sys.stderr)
        return 2
    cmd = command(uri, host, args.port, extra)
    if APP in cmd and not app_installed():
        print("error: this environment was built before `make ui` served its own page (pyproject.toml's entry point "
              "mlflow.app:tinygpt); rebuild it: make ui does, or .venv/bin/pip install -e .", file=sys.stderr)
        return 2
    problem = port_problem(host, args.port)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    db = sqlite_file(uri)
    if db is not None:
        if not db.is_file():
            print(f"note: {db} has no runs yet (`make ablations-quick` makes some in a minute)", file=sys.stderr)
        db.parent.mkdir(parents=True, exist_ok=True)
    if not is_loopback(host):
        print(f"warning: serving on {host}, beyond this machine: MLflow's UI has no login, and anyone who can reach "
              f"port {args.port} can read, change and delete these runs", file=sys.stderr)
    print(f"MLflow UI for {redact(uri)}\n  open {address(host, args.port)}  (starting: a few seconds; Ctrl-C stops it)",
          flush=True)
    links = exercise_links(uri, address(host, args.port)) if db is None or db.is_file() else []
    if links:
        print("  each exercise's runs (and, below, its seeds charted by variant):")
        print_links(links)
    # MLflow 3 also starts seven job-runner processes for its GenAI features (judges, trace roll-ups); training
    # runs need none of them, and on a small machine they slow everything else down.
    os.environ.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
    try:
        os.execv(cmd[0], cmd)
    except OSError as e:
        print(f"error: cannot start `mlflow server` ({e.strerror}); is the environment built? (make ui builds it)",
              file=sys.stderr)
        return 2
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
