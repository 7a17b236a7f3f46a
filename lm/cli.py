"""What each command checks before its heavy imports: its flags, its config composed by Hydra and checked against
the schemas, exercise names, and the runs it names, looked up without MLflow.

torch, Lightning, MLflow and pandas take 5 to 6 s to import here (`python -X importtime`, `make bench`); every
check below takes a few tenths of a second. A command module calls `before_imports(its_front)` at its top, under
`if __name__ == "__main__"`, so a mistake is one line before anything heavy loads; its `main()` makes the same
checks again through the same functions (the composed config is cached), so that main() works when imported.
"""
import gc
import sys
from dataclasses import dataclass, field
from typing import Callable, NoReturn

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf

from lm import config, store_check
from lm.errors import ConfigError, DataError, TrackingError

CFG_PARTS = ("job", "hydra", "all")


def before_imports(front: Callable[[list[str]], int | None]) -> None:
    """Runs a command's front on the command line; exits with its status if it settled the command (an error,
    --cfg, a sweep), returns if the work can start, with the garbage collector off until after_imports."""
    code = front(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    # The imports that follow make half a million objects and almost no garbage, yet their allocations set off full
    # collections that walk all of them: 8 in a run's imports, 1.0 s (gc.callbacks, 2026-12-01).
    gc.disable()


def after_imports() -> None:
    """The collector back on after a command's heavy imports, with what they made frozen (gc.freeze): later full
    collections walk only what the work allocates (a 600-step run made one more, of 0.6 s, walking the imports)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def finish(code: int) -> NoReturn:
    """Exits with code, past the interpreter's last garbage collection, which walks every object the imports made
    (0.5 s at the end of a report, 2026-12-01) to free memory the process is about to hand back anyway. Exit handlers
    and finalizers still run."""
    gc.freeze()
    sys.exit(code)


def fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


# --- python -m lm.train ----------------------------------------------------------------------------------
@dataclass
class Flags:
    """`python -m lm.train`'s own flags, Hydra's where Hydra has one (--cfg, -m); the rest are overrides."""
    overrides: list[str] = field(default_factory=list)
    resume: str | None = None
    cfg: str | None = None      # job or all: print the resolved config and stop
    multirun: bool = False      # -m: the overrides are a grid of runs


def parse_flags(argv: list[str]) -> Flags:
    flags, rest = Flags(), list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--resume":
            flags.resume = rest.pop(0) if rest else ""
        elif arg in ("--cfg", "-c"):
            flags.cfg = rest.pop(0) if rest and rest[0] in CFG_PARTS else "job"
            if flags.cfg == "hydra":
                raise ConfigError("--cfg hydra: runs are composed with Hydra's compose API, which has no Hydra "
                                  "run config to show; --cfg job prints the run's config")
        elif arg in ("-m", "--multirun"):
            flags.multirun = True
        elif arg.startswith("-") and "=" not in arg:
            raise ConfigError(f"unknown option {arg!r}; the options are --cfg [job|all], -m (a sweep), "
                              f"--resume RUN_ID and Hydra overrides (key=value)")
        else:
            flags.overrides.append(arg)
    return flags


def is_sweep(overrides: list[str]) -> bool:
    """Whether any override has several values (model.n_head=1,2): Hydra calls that ambiguous without -m; here it
    is a sweep. An override Hydra cannot parse is left for the config's own one-line error."""
    try:
        return any(o.is_sweep_override() for o in OverridesParser.create().parse_overrides(list(overrides)))
    except HydraException:
        return False


def to_yaml(d: dict) -> str:
    return OmegaConf.to_yaml(d).rstrip("\n")


def check_resume(run: store_check.RunRecord | None, run_id: str, uri: str, cfg: config.RunConfig) -> None:
    """--resume RUN_ID: a run of this store, unfinished, and trained with this config (its checkpoint fits)."""
    if run is None:
        raise ConfigError(f"--resume {run_id!r}: no such run in {uri}")
    if run.tags.get("config_hash") != cfg.config_hash:
        raise ConfigError(f"--resume {run_id}: that run and its checkpoint have another config (hash "
                          f"{run.tags.get('config_hash')}; these arguments give {cfg.config_hash}): resume it "
                          f"with the arguments it was started with")
    if run.status == "FINISHED":
        raise ConfigError(f"--resume {run_id}: that run already finished; there is nothing to resume")


def train_front(argv: list[str]) -> int | None:
    """`python -m lm.train`: --cfg printed, a sweep run, or the input checked; None when one run can start."""
    try:
        flags = parse_flags(argv)
        if flags.multirun or is_sweep(flags.overrides):
            if flags.resume is not None:
                raise ConfigError("--resume is for one run; a sweep resumes when the same command runs again")
            from lm import sweep  # the suite's machinery, for a sweep only

            return sweep.main(flags.overrides, cfg=flags.cfg is not None)
        cfg = config.load(flags.overrides)
        if flags.cfg:
            print(to_yaml(cfg.to_dict()))
            return 0
        if flags.resume is not None:
            uri = store_check.resolve_uri(cfg.tracking.uri)
            try:
                check_resume(store_check.run_record(uri, flags.resume) if flags.resume else None,
                             flags.resume, uri, cfg)
            except store_check.CannotTell:
                pass  # the run itself opens the store, and says what is wrong with it
    except (ConfigError, DataError) as e:  # DataError: a file of your own that cannot be a corpus
        return fail(str(e))
    return None


# --- python -m lm.sample ---------------------------------------------------------------------------------
SAMPLE_OPTIONS = {"run": "", "checkpoint": "", "prompt": "\n", "temperature": "0.8", "length": "400", "seed": "1"}


def sample_options(argv: list[str]) -> dict:
    """`make sample`'s key=value options, converted and checked; a ValueError names the bad one."""
    from lm.schema import check_temperature, unescape

    opts = dict(SAMPLE_OPTIONS)
    for arg in argv:
        key, eq, value = arg.partition("=")
        if not eq or key not in opts:
            raise ValueError(f"unknown option {arg!r}; the options are {', '.join(k + '=' for k in opts)}")
        opts[key] = value
    opts["prompt"] = unescape(opts["prompt"])
    opts["temperature"], opts["length"], opts["seed"] = (float(opts["temperature"]), int(opts["length"]),
                                                         int(opts["seed"]))
    check_temperature(opts["temperature"])
    if opts["length"] <= 0:
        raise ValueError(f"length={opts['length']} must be positive")
    return opts


def sample_front(argv: list[str]) -> int | None:
    """`python -m lm.sample`: the options, and the run named, checked without torch or MLflow."""
    try:
        opts = sample_options(argv)
        if opts["run"]:
            uri = store_check.resolve_uri()
            try:
                run = store_check.run_record(uri, opts["run"])
            except store_check.CannotTell:
                return None
            if run is None or (run.artifacts is not None and not (run.artifacts / "model.pt").is_file()):
                raise ValueError(f"run {opts['run']!r} has no model.pt in {uri}")
    except (ValueError, TrackingError) as e:
        return fail(str(e))
    return None
