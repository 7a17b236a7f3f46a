"""One run's configuration: composed by Hydra from conf/, checked against typed schemas, hashed."""
import copy
import dataclasses
import difflib
import functools
import hashlib
import json
import re
import typing
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.object_type import ObjectType
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from antlr4.error.Errors import LexerNoViableAltException
from hydra.errors import HydraException, MissingConfigException, OverrideParseException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException
from omegaconf.errors import ValidationError as OmegaValidationError

from lm.settings.corpus_file import own_text
from lm.settings.errors import ConfigError  # noqa: F401  (raised here, imported from here by callers)
from lm.settings.measures import PRESETS, MeasureConfig, preset
from lm.settings.schema import (
    DataConfig,
    GPTConfig,
    SampleConfig,
    TrainConfig,
)

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


@dataclass
class EvalConfig:
    every: int = 500            # validate every this many steps, and at the end
    val_batches: int = 20       # the fixed validation set: 20 batches of 64 windows, as in lesson 000
    val_batch_size: int = 64
    honest: bool = False        # also score every prediction from its prefix alone (the no-mask exercise)
    honest_windows: int = 128
    train_curve: bool = False   # also the loss on as many fixed windows of the training text at every validation
    #                             (train_eval_loss at each step), as lesson 002's log prints a train column
    head_windows: int = 64      # head statistics over this many validation windows,
    head_skip: int = 8          # skipping the first positions, which have little to look at
    final_windows: int = 0      # the final validation on the held-out text's first this many windows; 0: on every
    #                             window (the lessons' measure); toy runs cap it, where it cost more than their steps

    def __post_init__(self):
        for name in ("every", "val_batches", "val_batch_size", "honest_windows", "head_windows"):
            if getattr(self, name) <= 0:
                raise ValueError(f"eval.{name}={getattr(self, name)} must be positive")
        if self.final_windows < 0:
            raise ValueError(f"eval.final_windows={self.final_windows} must be 0 (every window) or positive")


@dataclass
class RuntimeConfig:
    threads: int = 0            # torch threads; 0: one for the lessons' models, the process's cores for far larger
    #                             ones, or with split_batch (lm/model/threads.py)
    accelerator: str = "auto"   # auto, cpu, cuda or mps
    precision: str = "auto"     # auto: bf16 autocast on CUDA, fp32 elsewhere
    compile: bool = False       # torch.compile the training step's model (round-off differs; see `make bench`)
    optimizer_impl: str = "foreach"  # foreach: the for-loop's exact sums in fewer calls; fused: one kernel per
    #                                  tensor (round-off differs); loop: torch's default on the CPU
    split_batch: bool = False   # CPU: the threads share each batch, a shard each (one torch thread apiece), rather
    #                             than every matmul; round-off differs; not with dropout; best without compile
    progress: bool = True
    progress_position: int = 0  # which terminal line the run's bar takes, below the suite's

    def __post_init__(self):
        if self.threads < 0:
            raise ValueError(f"runtime.threads={self.threads} must be 0 (chosen for the model) or more")
        if self.optimizer_impl not in ("foreach", "fused", "loop"):
            raise ValueError(f"runtime.optimizer_impl={self.optimizer_impl!r} must be foreach, fused or loop")


@dataclass
class TrackingConfig:
    uri: str | None = None      # else $MLFLOW_TRACKING_URI, else the project's own SQLite store
    experiment: str = "train"
    run_name: str | None = None
    checkpoint_dir: str | None = None  # resumable checkpoints; default: beside the store


@dataclass
class RunConfig:
    seed: int = 0                 # the run's seed: its weights, its batches and its samples
    init_from: str | None = None  # take the weights of this ablation's finished run of the same seed; no training
    data: DataConfig = field(default_factory=DataConfig)
    model: GPTConfig = field(default_factory=GPTConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    sample: SampleConfig = field(default_factory=SampleConfig)
    measure: MeasureConfig = field(default_factory=MeasureConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)

    def to_dict(self) -> dict:
        return asdict(self)

    def semantic(self) -> dict:
        """What decides a run's numbers: not where files live, how it is tracked, how many threads it gets or which
        measurements it makes after training (a run trained with some switched off counts as done; the report says
        what it did not measure)."""
        d = self.to_dict()
        for k in ("runtime", "tracking", "measure"):
            d.pop(k)
        for k in ("path", "cache_dir"):
            d["data"].pop(k)
        if not d["eval"]["final_windows"]:  # at its default, every window: the hash runs had before the key existed
            d["eval"].pop("final_windows")
        return d

    @property
    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.semantic(), sort_keys=True).encode()).hexdigest()[:12]


def _chain(e: BaseException) -> list[BaseException]:
    """The exception and those it was raised from: Hydra wraps OmegaConf's, which say which key."""
    chain = []
    while e is not None and len(chain) < 8:
        chain.append(e)
        e = e.__cause__ or e.__context__
    return chain


def closest_key(key: str, schema: type = None) -> str:
    """` (did you mean model.n_embd?)`: difflib's nearest of the schema's dotted keys, or nothing."""
    from lm.settings.options import fields   # the dotted keys of a dataclass, nested ones included
    found = difflib.get_close_matches(key, list(fields(schema or RunConfig)), n=1, cutoff=0.6)
    return f" (did you mean {found[0]}?)" if found else ""


def _type_name(e: OmegaConfBaseException, schema: type | None = None) -> str:
    """What the key's field holds, from its dataclass (the error's own, else the schema's field at its dotted key):
    `an integer`, `a float`, `a bool`."""
    try:
        kind = typing.get_type_hints(e.ref_type)[e.key] if dataclasses.is_dataclass(e.ref_type) else None
    except (KeyError, TypeError, NameError):
        kind = None
    owner = schema or RunConfig
    for part in str(e.full_key or "").split(".") if kind is None else ():
        hints = typing.get_type_hints(owner) if dataclasses.is_dataclass(owner) else {}
        kind = owner = hints.get(part)
        if kind is None:
            break
    kind = next((a for a in typing.get_args(kind) if a is not type(None)), kind)
    return {int: "an integer", float: "a float", bool: "a bool: true or false", str: "a text"}.get(
        kind, f"a {getattr(kind, '__name__', 'value of its type')}")


def one_line(e: Exception, schema: type | None = None) -> str:
    """Hydra's and OmegaConf's errors in one line, told apart by their types (the keys and values they carry), with
    difflib's nearest key for one that does not exist. `schema`: the dataclass whose keys a misspelt one is
    matched against (RunConfig's when None)."""
    chain = _chain(e)
    for x in chain:
        if isinstance(x, MissingConfigException) and x.missing_cfg_file:
            group, _, name = x.missing_cfg_file.rpartition("/")
            options = ", ".join(sorted(x.options or (p.stem for p in (CONF_DIR / group).glob("*.yaml"))))
            where = f"conf/{group}/ has" if (CONF_DIR / group).is_dir() else f"{group} takes"
            return f"{group}={name}: no such option ({where} {options})"
        if isinstance(x, OverrideParseException):
            override = x.override
            if "=" not in override:   # a bare word: Hydra takes key=value only
                return f"{override!r} is not key=value: write {override}=true for a switch, or {override}=VALUE"
            if any(isinstance(c, LexerNoViableAltException) for c in chain):
                return f"cannot parse the override {override!r}; quote a value with spaces or symbols: key='value'"
            return (f"cannot parse {override!r}: quote list items that hold '=' or symbols, "
                    f"as in overrides='[\"train.lr=10\"]'")
        if isinstance(x, (ConfigAttributeError, ConfigKeyError)) and x.full_key:
            return f"unknown config key '{x.full_key}'{closest_key(str(x.full_key), schema)} (see conf/ for the " \
                   f"keys there are)"
        if isinstance(x, OmegaValidationError) and x.full_key:
            return f"{x.full_key}={x.value!r} is not {_type_name(x, schema)}"
    lines = [ln.strip() for x in chain for ln in str(x).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__


def unknown_suite_word(word: str, suite_keys: list[str]) -> str | None:
    """A suite's word whose key is neither the suite's nor a run's (`worker=2`), in one line with the nearest of
    both; None for a word that is one of them, left to Hydra."""
    key = word.lstrip("+~").split("=")[0]
    top = key.split(".")[0]
    if not key or "=" not in word or top in suite_keys or top in {f.name for f in dataclasses.fields(RunConfig)} \
            or (CONF_DIR / top).is_dir() or word.startswith("+"):
        return None
    from lm.settings.options import fields
    found = difflib.get_close_matches(key, [*suite_keys, *fields(RunConfig)], n=1, cutoff=0.6)
    hint = f": did you mean {found[0]}=...?" if found else ""
    return (f"unknown option {key!r}{hint} (the suite's options are {', '.join(suite_keys)}; any other key=value "
            f"is a run's config key, as in conf/)")


def compose_dict(overrides: list[str], config_name: str = "train") -> DictConfig:
    return OmegaConf.create(_composed(tuple(overrides), config_name))  # a copy: the cached one stays as composed


def _register() -> None:
    """RunConfig as Hydra's schema for conf/train.yaml (its first default, `schema`): every default a dataclass
    holds is composed from the dataclass, so conf/ writes only what differs from it (conf/model/base.yaml: nothing
    but the vocabulary's source), and an override of any field composes even where no YAML names it. And the
    config group `measure`, the presets lm/settings/measures.py derives from its table (`measure=none`): no file holds
    a list of the measurements."""
    store = ConfigStore.instance()
    store.store(name="schema", node=RunConfig)
    for name in PRESETS:
        store.store(group="measure", name=name, node=preset(name))


_register()  # at import, as Hydra's structured configs are: the groups are known before anything is composed


@functools.lru_cache(maxsize=256)
def _composed(overrides: tuple[str, ...], config_name: str) -> DictConfig:
    """Hydra's compose, once per command line: a command checks its input before its heavy imports, then again in
    main(); a suite composes every run's config (a sweep: every grid point's) to check it, then again to plan."""
    try:
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            return compose(config_name, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as e:
        raise ConfigError(one_line(e)) from None


def to_run_config(cfg: DictConfig) -> RunConfig:
    try:
        merged = OmegaConf.merge(OmegaConf.structured(RunConfig), cfg)
        if not merged.data.sha256:  # your own text: its hash and vocabulary are the file's, part of the config hash
            merged.data.sha256, merged.data.vocab_size = own_text(merged.data, merged.model.block_size)
        return OmegaConf.to_object(merged)
    except OmegaConfBaseException as e:
        raise ConfigError(one_line(e)) from None
    except ValueError as e:
        raise ConfigError(str(e)) from None


def load(overrides: list[str] = ()) -> RunConfig:
    """conf/train.yaml with Hydra overrides, checked: any problem is one ConfigError before any work."""
    return to_run_config(compose_dict(list(overrides)))


def load_run(overrides: list[str], seed: int | None = None, run_name: str | None = None) -> RunConfig:
    """load([*overrides, f"seed={seed}", f"tracking.run_name={quoted(run_name)}"]), each left out when None, for a
    plan of many runs: the runs that share `overrides` (a variant's seeds) share one checked config, copied and given
    each its seed and name. Composing and checking one config takes 0.1 to 0.4 s (Hydra's compose, then the typed
    schemas), a copy 0.2 ms: 10,000 runs composed one by one would be 17 minutes or more before any work."""
    base = _shared(tuple(overrides))
    if base is None:  # a value interpolates the seed or the run's name: composed whole, as load() would
        return load([*overrides, *([f"seed={seed}"] if seed is not None else []),
                     *([f"tracking.run_name={quoted(run_name)}"] if run_name is not None else [])])
    cfg = copy.deepcopy(base)
    if seed is not None:
        cfg.seed = seed
    if run_name is not None:
        cfg.tracking.run_name = run_name
    return cfg


PER_RUN = re.compile(r"\$\{[^}]*\b(seed|run_name)\b")  # an interpolation of what load_run sets on each copy


@functools.lru_cache(maxsize=1024)
def _shared(overrides: tuple[str, ...]) -> RunConfig | None:
    """The config of these overrides (never to be changed: load_run copies it), composed once per set of config
    group choices (data=, model=, profile=, +key, ~key) and the plain values applied after the groups by the call
    Hydra's compose makes for each (OmegaConf.update, merging; a sweep's points differ in values: 0.06 s each rather
    than 0.4 s); None when a value interpolates the seed or the run's name, which load_run sets on each copy."""
    try:
        parsed = _parser().parse_overrides(list(overrides))
        cfg = compose_dict([o.input_line for o in parsed if not _is_value(o)])
        for o in parsed:
            if _is_value(o):
                OmegaConf.update(cfg, o.key_or_group, o.value(), merge=True)
    except (HydraException, OmegaConfBaseException):
        return to_run_config(compose_dict(list(overrides)))  # raises the error load() gives, in its words
    if PER_RUN.search(OmegaConf.to_yaml(cfg)):
        return None
    return to_run_config(cfg)


@functools.cache
def _parser() -> OverridesParser:
    return OverridesParser.create()


def _is_value(o: Override) -> bool:
    """A plain key=value that Hydra applies after composing (not a config group's choice, an addition or a
    deletion, which change what is composed); anything in doubt is composed."""
    key = o.key_or_group
    return (o.type is OverrideType.CHANGE and o.package is None and not o.is_sweep_override()
            and not key.startswith("hydra") and not _is_group(key))


def _is_group(key: str) -> bool:
    """A config group of conf/ (data, model, profile) or one registered with Hydra (measure), or a file in one."""
    return ((CONF_DIR / key.replace(".", "/")).exists() or (CONF_DIR / key).exists()
            or ConfigStore.instance().get_type(key) is not ObjectType.NOT_FOUND)


def quoted(value: str) -> str:
    """A value as a Hydra override reads it back unchanged, whatever it holds (a sweep's run names hold = and ,)."""
    return "'" + value.replace("'", "\\'") + "'"


def flatten(d: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        out.update(flatten(v, key + ".") if isinstance(v, dict) else {key: v})
    return out
