"""Every command's options, in one form: `key=value` words, parsed by OmegaConf against the command's dataclass.

    make sample ARGS="temperature=0.5"   make heads ARGS="quick=true force=true"   make bench ARGS="quick=true"
    make ui PORT=5001 ARGS="server=[--workers,4]"   make gpu-check ARGS="quick=true runtime.accelerator=cpu"

A value is converted by its field's type (true/false, a whole number, a number, one of an Enum's values, a list
as [a,b] as Hydra reads it, or a,b); a text field takes the rest of the word verbatim (a prompt may hold =, commas
and quotes). One alias: a bare switch is the switch on, `quick` is `quick=true`. An unknown key, a value of the
wrong type or a --flag is one ConfigError that names the fix, raised before any heavy import: this module imports
OmegaConf only (and Hydra's override parser for a [list]).
`make train`, `make sweep` and `make ablations` take the same key=value form through Hydra, against conf/.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import sys
import types
import typing
from enum import Enum
from typing import TypeVar

from omegaconf import OmegaConf
from omegaconf.errors import ValidationError

from lm.settings.errors import ConfigError

T = TypeVar("T")


# --- the parser ---------------------------------------------------------------------------------------------------
def fields(schema: type) -> dict[str, object]:
    """Every option of a schema by its dotted key (runtime.accelerator), with its type."""
    out = {}
    for f in dataclasses.fields(schema):
        kind = typing.get_type_hints(schema)[f.name]
        if dataclasses.is_dataclass(kind):
            out.update({f"{f.name}.{k}": v for k, v in fields(kind).items()})
        else:
            out[f.name] = kind
    return out


def _optional(kind) -> tuple[object, bool]:
    """`str | None` -> (str, True); any other type -> (it, False)."""
    args = typing.get_args(kind)
    if isinstance(kind, types.UnionType) and type(None) in args:
        return next(a for a in args if a is not type(None)), True
    return kind, False


def _listed(kind) -> str:
    """The options' forms, for a message: quick=true|false, only=[train,sample,...], threads=N."""
    base, _ = _optional(kind)
    item = (typing.get_args(base) or [None])[0]
    if base is bool:
        return "true|false"
    if typing.get_origin(base) is list:
        return "[" + (",".join(e.value for e in item) if isinstance(item, type) and issubclass(item, Enum)
                      else "...") + "]"
    if isinstance(base, type) and issubclass(base, Enum):
        return "|".join(e.value for e in base)
    return {int: "N", float: "X", str: "TEXT"}.get(base, "...")


def _unknown(word: str, key: str, value: str | None, schema: type, known: dict[str, object]) -> str:
    """A word that names no option, with the fix: the option written out, the nearest name, or the list of options
    a command passes on (`mlflow server`'s --workers 4 as server=[--workers,4])."""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if value is None and close and known[close[0]] is bool:
        value = "true"  # a bare switch, misspelt
    on = [f.name for f in dataclasses.fields(schema) if f.metadata.get("passed_on")]
    if word.startswith("-") and key in known:
        fix = f"options are key=value: {key}={value if value is not None else _listed(known[key])}"
    elif word.startswith("-") and on:
        fix = f"{on[0]}=[...] passes options on: {on[0]}=[{word}{',' + value if value is not None else ''}]"
    elif close:
        fix = f"did you mean {close[0]}={value if value is not None else _listed(known[close[0]])}?"
    else:
        fix = "options are key=value"
    return f"unknown option {word!r}: {fix} (the options are {usage(known)})"


def usage(known: dict[str, object]) -> str:
    return ", ".join(f"{k}={_listed(v)}" for k, v in known.items())


def _wrong(key: str, value: str, kind) -> str:
    """A value its option's type cannot take, and the fix."""
    base, _ = _optional(kind)
    if typing.get_origin(base) is list:
        base = typing.get_args(base)[0]
    if isinstance(base, type) and issubclass(base, Enum):
        names = [e.value for e in base]
        bad = next((v for v in _value(list[str], value) if v.lower() not in names), value)
        return f"{key}={value!r}: {bad!r} is not one of {', '.join(names)}"
    if base is bool:
        close = difflib.get_close_matches(value.lower(), ["true", "false"], n=1, cutoff=0.5)
        fix = f"did you mean {key}={close[0]}?" if close else f"{key}=true or {key}=false"
        return f"{key}={value!r} is not true or false: {fix}"
    what = {int: "a whole number", float: "a number"}.get(base, base.__name__)
    return f"{key}={value!r} is not {what}: {key}={_listed(kind)}"


def _value(kind, value: str):
    """The word's value as OmegaConf takes it for the field: a list split, an Enum's value as its member's name."""
    base, optional = _optional(kind)
    if optional and value in ("", "null", "None"):
        return None
    if typing.get_origin(base) is list:
        item = typing.get_args(base)[0]
        return [_value(item, v) for v in _items(value)]
    if isinstance(base, type) and issubclass(base, Enum):
        return next((e.name for e in base if e.value == value.lower()), value)
    return value


def _items(value: str) -> list[str]:
    """A list's items: [a,b] read by Hydra's override parser (an item with a comma quoted: [a,'b,c']), or a,b."""
    if not value.startswith("["):
        return [v.strip() for v in value.split(",") if v.strip()]
    # Hydra, 0.13 s (python -X importtime) that a command's check pays only for an option given as a [list]
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        items = OverridesParser.create().parse_override(f"list={value}").value()
    except HydraException:
        raise ConfigError(f"cannot read the list {value!r}: [a,b], an item with a comma or a symbol quoted: "
                          f"[a,'b,c']") from None
    return [str(v) for v in items]


# --- --help ---------------------------------------------------------------------------------------------------
HELP = ("-h", "--help")


def comments(schema: type, prefix: str = "") -> dict[str, str]:
    """Each option's comment in its dataclass's source (`port: int = 5000  # the port`), by its dotted key: the
    one line --help shows beside it."""
    import inspect
    import re

    out = {}
    try:
        source = inspect.getsource(schema)
    except (OSError, TypeError):
        source = ""
    for m in re.finditer(r"^ {4}(\w+): [^\n]*?\s# ([^\n]*)$", source, re.M):
        out[prefix + m[1]] = m[2].strip()
    for f in dataclasses.fields(schema):
        kind = typing.get_type_hints(schema)[f.name]
        if dataclasses.is_dataclass(kind):
            out.update(comments(kind, f"{prefix}{f.name}."))
    return out


def _shown(value) -> str:
    """A default as it is written on the command line."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return "[" + ",".join(_shown(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str) and (not value or any(c.isspace() for c in value)):
        return repr(value)
    return str(value)


def option_rows(schema: type) -> list[tuple[str, str]]:
    """(key=default, its line) for each option of the schema."""
    default, notes = schema(), comments(schema)
    rows = []
    for key, kind in fields(schema).items():
        value = default
        for part in key.split("."):
            value = getattr(value, part)
        rows.append((f"{key}={_shown(value)}", notes.get(key) or f"{_listed(kind)}"))
    return rows


def table(rows: list[tuple[str, str]]) -> str:
    width = max((len(a) for a, _ in rows), default=0)
    return "\n".join(f"  {a:<{width}}  {b}" for a, b in rows)


def help_text(schema: type, command: str | None = None) -> str:
    """A command's --help: what it is, its usage, and each option with its default and one line."""
    main = sys.modules.get("__main__")
    module = getattr(getattr(main, "__spec__", None), "name", None) or "the command"
    command = command or module.removesuffix(".__main__")
    about = (schema.__doc__ or "").strip()
    return (f"{about}\n\nusage: python -m {command} [key=value ...]   (make: ARGS=\"key=value ...\"; a bare "
            f"switch is switch=true)\n\noptions, each with its default:\n{table(option_rows(schema))}")


def asks_help(argv) -> bool:
    return any(a in HELP for a in argv)


def parse(schema: type[T], argv: typing.Iterable[str]) -> T:
    """argv's key=value words as the schema's dataclass; a word that names no option, or a value its field's type
    cannot take, is a one-line ConfigError naming the fix. -h or --help prints the options and exits 0, as
    argparse does."""
    words = list(argv)
    if asks_help(words):
        print(help_text(schema))
        sys.exit(0)
    known = fields(schema)
    cfg = OmegaConf.structured(schema)
    texts = {}
    for i, word in enumerate(words):
        key, eq, value = word.partition("=")
        key = key.lstrip("-") if word.startswith("-") else key
        if word.startswith("-") or key not in known:
            after = value if eq else (words[i + 1] if i + 1 < len(words) and "=" not in words[i + 1] else None)
            raise ConfigError(_unknown(word, key, after, schema, known))
        kind = known[key]
        if not eq:
            if kind is not bool:
                raise ConfigError(f"{key} needs a value: {key}={_listed(kind)}")
            value = "true"  # the alias: a bare switch is the switch on
        base, optional = _optional(kind)
        if base is str:  # text, verbatim: OmegaConf would read ${...} in it
            texts[key] = None if optional and value in ("", "null", "None") else value
            continue
        try:
            OmegaConf.update(cfg, key, _value(kind, value), merge=False)
        except ValidationError:
            raise ConfigError(_wrong(key, value, kind)) from None
    out = OmegaConf.to_object(cfg)
    for key, value in texts.items():
        *path, name = key.split(".")
        target = out
        for part in path:
            target = getattr(target, part)
        setattr(target, name, value)
    return out


def exit_if_wrong(schema: type, argv: list[str]) -> None:
    """A tool's options checked before it imports torch: one line and exit status 2 if they are wrong."""
    try:
        parse(schema, argv)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)


# --- the commands' options ----------------------------------------------------------------------------------------
@dataclasses.dataclass
class SampleOptions:
    """`make sample`: a trained run's (or a checkpoint file's) text."""
    run: str = ""               # the run whose model.pt samples; none: the newest `make train` run
    checkpoint: str = ""        # a model.pt file instead of a run
    prompt: str = "\n"          # the text it continues; \n, \t and \\ are unescaped
    temperature: float = 0.8    # above 0: lower is surer, higher more varied
    length: int = 400           # characters to write
    seed: int = 1               # the sampler's seed: the same seed, the same text
    threads: int = 0            # torch threads; 0: one, as a character at a time keeps no more busy


@dataclasses.dataclass
class HeadsOptions:
    """`make heads`: knock-out of every head of one run, or of an exercise's finished runs."""
    run: str = ""               # one run: its knock-out logged and its head table printed
    exercise: str = ""          # or every finished run of an exercise
    quick: bool = False         # the quick suite's runs (quick/<exercise>)
    force: bool = False         # compute the knock-out again, though the run has one
    tracking_uri: str = ""      # the store; none: MLFLOW_TRACKING_URI, else ./mlruns
    threads: int = 0            # torch threads; 0: as `make train` would give the run's model (lm/model/threads.py)


@dataclasses.dataclass
class ReportOptions:
    """`make report` and `make export` (analysis/options.py checks them)."""
    quick: bool = False         # the quick suite's runs (quick/<exercise>)
    ablations: str = "all"      # all, or names separated by commas: heads,nomask or [heads,nomask]
    out: str = "reports"        # the folder written (make export: reports/export)
    log: bool = True            # the report also logged to the store as an MLflow run
    tracking_uri: str | None = None  # the store; none: MLFLOW_TRACKING_URI, else ./mlruns
    docs: str = ""              # a folder: `make report` writes lesson-claims.md and results.md into it (docs=docs)
    svg: bool = False           # `make report`: each figure also as SVG beside its PNG (out/figures/*.svg)


@dataclasses.dataclass
class CompareOptions:
    """`make compare`: two stores' verdict tables side by side (analysis/compare.py)."""
    a: str = ""                 # a store: its folder (mlruns), its mlflow.db, or a tracking URI
    b: str = ""                 # the other store, in the same forms
    quick: bool = False         # the quick suite's runs (quick/<exercise>) in both
    ablations: str = "all"      # the exercises compared, as `make report`'s
    out: str = "reports"        # compare.html and compare.md go here


@dataclasses.dataclass
class DecideOptions:
    """`make decide`: seeds added in rounds to the variants that undecided claims read, within a budget."""
    budget: str = ""            # runs (30) or CPU-minutes (60min): a run's minutes on its one thread
    quick: bool = False         # the quick suite's runs
    ablations: str = "all"      # the table it reads, as `make report`'s
    workers: int = 0            # the suite's; 0: chosen for the machine
    plan: bool = False          # print the next round's plan; train nothing
    tracking_uri: str | None = None  # the store; none: MLFLOW_TRACKING_URI, else ./mlruns


@dataclasses.dataclass
class CalibrateOptions:
    """`make calibrate`: the claims table's error rate, simulated through the table (analysis/calibration)."""
    tables: int = 10_000        # simulated stores, each through the table at its first look and at the looks
    power: int = 2_000          # tables for each true effect of the power
    seed: int = 0               # the simulation's seed
    workers: int = 1            # processes: each simulates its share of the tables
    record: bool = False        # keep the figures in analysis/calibration/measured.json (the report quotes them)


@dataclasses.dataclass
class SpreadsOptions:
    """`python -m analysis.calibration.spreads`: the seeds' spread of every metric of a store's runs."""
    experiments: list[str] = dataclasses.field(default_factory=list)   # exercises or other experiments; none: all
    quick: bool = False         # the quick suite's runs
    tracking_uri: str | None = None  # the store; none: MLFLOW_TRACKING_URI, else ./mlruns


class Section(str, Enum):
    """A section of `make bench`."""
    TRAIN = "train"
    SAMPLE = "sample"
    SUITE = "suite"
    MEMORY = "memory"
    STARTUP = "startup"
    PROCESS = "process"
    REPORT = "report"
    SCALE = "scale"
    STUDY = "study"
    VALIDATION = "validation"
    WHOLE = "whole"   # the whole study against its runs by the plain loop: about 1.5 hours, so only when named
    SHARED = "shared"   # each command alone and beside a busy core: only when named, as it keeps a core busy


@dataclasses.dataclass
class BenchOptions:
    """`make bench`: the speed table, side by side."""
    quick: bool = False         # fewer steps and chunks: 1-2 minutes
    threads: int = 0            # 0: every core this process may use
    chunks: int = 0             # timed chunks of 50 steps per harness run; 0: 3 with quick, else 8
    pairs: int = 0              # the process row's pairs of whole processes, harness and plain loop; 0: 5
    steps: int = 0              # the steps of each of those processes; 0: 50 with quick, else the 3,000
    only: list[Section] = dataclasses.field(
        default_factory=lambda: [s for s in Section if s not in (Section.WHOLE, Section.SHARED)])

    def finish(self) -> BenchOptions:
        self.threads = self.threads or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                        else os.cpu_count() or 1)
        self.chunks = self.chunks or (3 if self.quick else 8)
        self.pairs = self.pairs or 5
        self.steps = self.steps or (50 if self.quick else 3000)
        return self

    @property
    def warmup(self) -> int:
        return 30


class Step(str, Enum):
    """A step of `make gpu-check`, in the order they run: the checks that the harness works there before the timings,
    so that a lease cut short still says whether it does (on an H200, the timings alone took most of a 10-minute
    command)."""
    ENV = "env"
    NUMERICS = "numerics"
    SUITE = "suite"
    GPU = "gpu"
    LARGE = "large"


class Accelerator(str, Enum):
    CUDA = "cuda"
    CPU = "cpu"


@dataclasses.dataclass
class GpuCheckRuntime:
    accelerator: Accelerator = Accelerator.CUDA  # cpu: the checks on a machine without a GPU


@dataclasses.dataclass
class GpuCheckOptions:
    """`make gpu-check`: on a lent GPU, fp32 CUDA against CPU, the quick suite on CUDA, the profiles timed."""
    quick: bool = False         # toy sizes
    runtime: GpuCheckRuntime = dataclasses.field(default_factory=GpuCheckRuntime)
    only: list[Step] = dataclasses.field(default_factory=lambda: list(Step))  # the steps, in their order
    large_seconds: float = 180.0  # how long the large profile trains


@dataclasses.dataclass
class UiOptions:
    """`make ui` (the Makefile's HOST and PORT are host= and port=)."""
    host: str = "127.0.0.1"     # where it listens: this machine only; 0.0.0.0 exposes it (README)
    port: int = 5000            # its port
    # more `mlflow server` options, passed on: server=[--workers,4]
    server: list[str] = dataclasses.field(default_factory=list, metadata={"passed_on": True})
