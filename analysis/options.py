"""`make report`'s options, and the checks it makes before it imports pandas, seaborn and MLflow (4 s)."""
import sys

from lm.settings import exercises, options
from lm.settings.errors import ConfigError, TrackingError
from lm.tracking.store_check import check_server, resolve_uri, sqlite_file


def parse(argv: list[str]) -> options.ReportOptions:
    opts = options.parse(options.ReportOptions, argv)
    opts.ablations = opts.ablations.strip("[]")
    return opts


def no_store(uri: str) -> str | None:
    """Why there is nothing to read at uri, when a look at the file tells: opening it would create an empty store."""
    db = sqlite_file(uri)
    if db is not None and not db.is_file():
        return f"no MLflow store at {db}; run `make ablations` first, or set TINYGPT_STORE or MLFLOW_TRACKING_URI"
    return None


def report_before_imports(argv: list[str]) -> int | None:
    """`python -m analysis.report`: the options, the exercises and the store's file checked; None when the report
    can be built."""
    try:
        opts = parse(argv)
        files = exercises.load_all()
        # A sweep (sweep/<name>) is an exercise only the store holds: the full path looks there.
        named = [n.strip() for n in opts.ablations.split(",") if n.strip() and n.strip() != "all"]
        exercises.select([n for n in named if not n.startswith("sweep/")] or "all", files)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return check_store(opts.tracking_uri)


def check_store(tracking_uri: str | None) -> int | None:
    """The store's file and the server's answer to this login, checked before the heavy imports: the exit status
    after one line of error, or None when the store can be read."""
    uri = resolve_uri(tracking_uri)
    problem = no_store(uri)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    try:
        check_server(uri)  # a server that is down, or refuses the login
    except TrackingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return None
