"""What each command checks before its heavy imports: its flags, its config composed by Hydra and checked against
the schemas, exercise names, and the runs it names, looked up without MLflow.

torch, Lightning, MLflow and pandas take 5 to 6 s to import here (`python -X importtime`, `make bench`); every
check below takes a few tenths of a second. A command module calls `before_imports(<command>_before_imports)` at its top, under
`if __name__ == "__main__"`, so a mistake is one line before anything heavy loads; its `main()` makes the same
checks again through the same functions (the composed config is cached), so that main() works when imported.
"""
import dataclasses
import typing
from dataclasses import dataclass, field

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException

from lm import process
from lm.settings import config, exercises, options
from lm.settings.errors import ConfigError, DataError, TrackingError
from lm.settings.schema import check_temperature, unescape
from lm.tracking import store_check

CFG_PARTS = ("job", "hydra", "all")


# --- python -m lm.commands.train ----------------------------------------------------------------------------------
@dataclass
class Flags:
    """`python -m lm.commands.train`'s own flags, Hydra's where Hydra has one (--cfg, -m); the rest are overrides."""
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


def check_resume(run: store_check.RunRecord | None, run_id: str, uri: str, cfg: config.RunConfig) -> None:
    """--resume RUN_ID: a run of this store, unfinished, and trained with this config (its checkpoint fits)."""
    if run is None:
        raise ConfigError(f"--resume {run_id!r}: no such run in {store_check.redact(uri)}")
    if run.tags.get("config_hash") != cfg.config_hash:
        raise ConfigError(f"--resume {run_id}: that run and its checkpoint have another config (hash "
                          f"{run.tags.get('config_hash')}; these arguments give {cfg.config_hash}): resume it "
                          f"with the arguments it was started with")
    if run.status == "FINISHED":
        raise ConfigError(f"--resume {run_id}: that run already finished; there is nothing to resume")


def run_keys_help() -> str:
    """A run's config as --help lists it: each top-level key, and each section's keys (their values: --cfg)."""
    rows = []
    for f in dataclasses.fields(config.RunConfig):
        kind = typing.get_type_hints(config.RunConfig)[f.name]
        if dataclasses.is_dataclass(kind):
            groups = sorted(p.stem for p in (config.CONF_DIR / f.name).glob("*.yaml"))
            group = f"{f.name}={'|'.join(groups)} (a file of conf/{f.name}/), or " if groups else ""
            if f.name == "measure":
                group = "measure=all|none, or "
            rows.append((f"{f.name}.*", group + " ".join(g.name for g in dataclasses.fields(kind))))
        else:
            rows.append((f"{f.name}={options._shown(f.default)}", options.comments(config.RunConfig).get(f.name, "")))
    return options.table(rows)


TRAIN_HELP = """`make train`: one run of the lessons' base model, tracked in MLflow.

usage: python -m lm.commands.train [key=value ...] [--resume RUN_ID] [--cfg [job|all]]
       python -m lm.commands.train -m model.n_head=1,2,4 model.n_layer=2,4 [seeds=3]   (a sweep: make sweep)

Hydra's overrides against conf/train.yaml: key=value, +key=value to add, ~key to remove. --cfg prints the
composed config (every key and its value) and trains nothing; --resume RUN_ID trains a killed run on.

the config's keys (--cfg shows their values):
"""


def train_before_imports(argv: list[str]) -> int | None:
    """`python -m lm.commands.train`: --cfg printed, a sweep run, or the input checked; None when one run can start."""
    if options.asks_help(argv):
        print(TRAIN_HELP + run_keys_help())
        return 0
    try:
        flags = parse_flags(argv)
        if flags.multirun or is_sweep(flags.overrides):
            if flags.resume is not None:
                raise ConfigError("--resume is for one run; a sweep resumes when the same command runs again")
            from lm.commands import sweep  # the suite's machinery: 0.16 s that one run's check never pays

            return sweep.main(flags.overrides, cfg=flags.cfg is not None)
        cfg = config.load(flags.overrides)
        if flags.cfg:
            print(store_check.redact(process.to_yaml(cfg.to_dict())))
            return 0
        store_check.check_server(store_check.resolve_uri(cfg.tracking.uri))  # down, or refuses the login
        if flags.resume is not None:
            uri = store_check.resolve_uri(cfg.tracking.uri)
            try:
                check_resume(store_check.run_record(uri, flags.resume) if flags.resume else None,
                             flags.resume, uri, cfg)
            except store_check.CannotTell:
                pass  # the run itself opens the store, and says what is wrong with it
    except (ConfigError, DataError, TrackingError) as e:  # DataError: a file of your own that cannot be a corpus
        return process.fail(str(e))
    return None


# --- python -m lm.commands.sample ---------------------------------------------------------------------------------
def sample_options(argv: list[str]) -> options.SampleOptions:
    """`make sample`'s key=value options, converted and checked; a ValueError names the bad one."""
    opts = options.parse(options.SampleOptions, argv)
    opts.prompt = unescape(opts.prompt)
    check_temperature(opts.temperature)
    if opts.length <= 0:
        raise ConfigError(f"length={opts.length} must be positive")
    return opts


def sample_before_imports(argv: list[str]) -> int | None:
    """`python -m lm.commands.sample`: the options, and the run named, checked without torch or MLflow."""
    try:
        opts = sample_options(argv)
        if opts.run:
            uri = store_check.resolve_uri()
            try:
                run = store_check.run_record(uri, opts.run)
            except store_check.CannotTell:
                return None
            db = store_check.sqlite_file(uri)
            if db is not None and not db.is_file():
                raise ValueError(f"no store at {store_check.redact(uri)}, so no run {opts.run!r}: train one first "
                                 f"(make train), or set MLFLOW_TRACKING_URI to the store that has it")
            if run is None:
                raise ValueError(f"no run {opts.run!r} in {store_check.redact(uri)}")
            if run.artifacts is not None and not (run.artifacts / "model.pt").is_file():
                raise ValueError(f"run {opts.run!r} has no model.pt in {store_check.redact(uri)}")
    except (ValueError, TrackingError) as e:
        return process.fail(str(e))
    return None


# --- python -m lm.commands.heads ----------------------------------------------------------------------------------
def heads_options(argv: list[str]) -> options.HeadsOptions:
    """`make heads`'s key=value options, with one of run= and exercise=, and the exercise known."""
    opts = options.parse(options.HeadsOptions, argv)
    if bool(opts.run) == bool(opts.exercise):
        raise ConfigError("give one of run=RUN_ID (make heads RUN=...) and exercise=NAME (make heads EXERCISE=...)")
    if opts.exercise:
        exercises.select(opts.exercise)
    return opts


def heads_before_imports(argv: list[str]) -> int | None:
    """`python -m lm.commands.heads`: the options and the exercise checked without torch, pandas or MLflow."""
    try:
        heads_options(argv)
    except ConfigError as e:
        return process.fail(str(e))
    return None
