"""`make report`'s options, and the checks it makes before it imports pandas, seaborn and MLflow (4 s)."""
import sys
from dataclasses import dataclass
from pathlib import Path

from lm.spec import exercises
from lm.spec.errors import ConfigError
from lm.spec.store_check import resolve_uri


@dataclass
class Options:
    quick: bool = False
    ablations: str = "all"
    out: str = "reports"
    log: bool = True
    tracking_uri: str | None = None


class OptionError(ValueError):
    pass


def parse(argv: list[str]) -> Options:
    opts = Options()
    for arg in argv:
        key, eq, value = arg.partition("=")
        if not eq or key not in Options.__dataclass_fields__:
            raise OptionError(f"unknown option {arg!r}; the options are "
                              f"{', '.join(k + '=' for k in Options.__dataclass_fields__)}")
        if key in ("quick", "log"):
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise OptionError(f"{key}={value!r}: must be true or false")
            value = value.lower() in ("true", "1", "yes")
        elif key == "ablations":
            value = value.strip("[]")
        setattr(opts, key, value or None if key == "tracking_uri" else value)
    return opts


def no_store(uri: str) -> str | None:
    """Why there is nothing to read at uri, when a look at the file tells: opening it would create an empty store."""
    db = Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None
    if db is not None and not db.is_file():
        return f"no MLflow store at {db}; run `make ablations` first, or set TINYGPT_STORE or MLFLOW_TRACKING_URI"
    return None


def front(argv: list[str]) -> int | None:
    """`python -m analysis.report`: the options, the exercises and the store's file checked; None when the report
    can be built."""
    if argv and argv[0] in ("-h", "--help"):
        return None
    try:
        opts = parse(argv)
        files = exercises.load_all()
        # A sweep (sweep/<name>) is an exercise only the store holds: the full path looks there.
        named = [n.strip() for n in opts.ablations.split(",") if n.strip() and n.strip() != "all"]
        exercises.select([n for n in named if not n.startswith("sweep/")] or "all", files)
    except (OptionError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    problem = no_store(resolve_uri(opts.tracking_uri))
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    return None
