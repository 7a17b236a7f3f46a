"""The exercises in experiments/: each file's variants expanded into runs, and its claims as checkable expressions.

A claim's `check` is a small expression over variants' results, each the mean over seeds:
`nopos.val_loss > pos.val_loss`, `base.val_loss[500]` (the value logged at step 500),
`base.probe_top1 == 'e'` (a tag), with `and`, `or`, `not`, arithmetic, `abs`, `min` and `max`. Another
exercise's variant is named with its exercise first: `baseline:base.knockout_prev_head_b1` (or, the same,
`baseline.base.knockout_prev_head_b1`); its lookup gets the variant as "baseline:base".
"""
import ast
import functools
import operator
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from lm.settings import metrics, ui
from lm.settings.claims import Claim, Source
from lm.settings.errors import ConfigError
from lm.settings.exercise_file import suggest, validate
from lm.settings.report_kinds import METRIC_OPTIONS, VARIANT_OPTIONS

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
FOLDER_VARIABLE = "TINYGPT_EXPERIMENTS"  # another folder of exercise files, for the suite and the report alike
FUNCTIONS = {"abs": abs, "min": min, "max": max}


class NotRun(LookupError):
    """A claim names a variant or a number that the store does not have."""


class NotMeasured(NotRun):
    """A claim whose number the runs were told not to measure (measure.<name>=false): the message names the switch."""


class NotApplicable(NotRun):
    """A claim that cannot hold on the corpus its runs read: its figures are another corpus's, or the number it
    names cannot be measured on this one (a probe with characters the text lacks). The message says which."""


@dataclass
class RunSpec:
    exercise: str
    variant: str
    seed: int
    shared: list[str]   # the exercise's and the variant's overrides: the same for every seed
    init_from: str | None = None

    @property
    def name(self) -> str:
        return f"{self.variant}/seed{self.seed}"


# The seeds of a disjoint_seeds exercise's i-th variant start at i * SEED_BLOCK + 1: far enough apart that no
# number of added seeds reaches the next variant's.
SEED_BLOCK = 1000


@dataclass
class Exercise:
    name: str
    title: str
    lesson: str                       # which lesson asks this, and what, in our words: a description, not a quote
    #                                   (a claim's `lesson:` is the quote)
    measures: str
    variants: dict[str, list[str]]
    steps: int | None = None
    seeds: int | None = None          # the least seeds per variant, whatever the suite asks (quick included)
    overrides: list[str] = field(default_factory=list)
    init_from: str | None = None      # an exercise whose trained models this one reads instead of training
    budget: str | None = None         # the variant whose training time is the wall-clock budget
    corpus: str | None = None         # the corpus the lessons' figures in the claims are about; on another,
    #                                   the claims are not applicable (None: they hold on any corpus)
    claims: list[Claim] = field(default_factory=list)
    report: list[dict] | None = None  # the report section's figures: [{kind: curves, metrics: [val_loss]}, ...]
    ui: dict | None = None            # make ui's charts (lm/settings/ui.py): {lines: [...], dots: [...], bars: [...]}
    disjoint_seeds: bool = False      # each variant its own seeds (1..n, 1001..1000+n, ...): an A/A check's twins,
    #                                   which would otherwise be one run each (the same config, the same hash); seeds
    #                                   added later (make decide) extend each variant's block and stay disjoint

    def runs(self, seeds: int, fewer: dict[str, int] | None = None) -> list[RunSpec]:
        """Each variant's runs at `seeds` seeds, or at the fewer that `fewer` names for it; the exercise's own
        `seeds` are its least whatever is asked (at quick size too)."""
        steps = [f"train.steps={self.steps}"] if self.steps else []
        runs = []
        for i, (variant, overrides) in enumerate(self.variants.items()):
            n = max(self.seeds or 0, min(seeds, (fewer or {}).get(variant, seeds)))
            first = i * SEED_BLOCK if self.disjoint_seeds else 0
            shared = [*steps, *self.overrides, *overrides]
            runs += [RunSpec(self.name, variant, first + k, shared, self.init_from) for k in range(1, n + 1)]
        return runs

def parse(name: str, text: str, source: str, others: dict[str, list[str]] | None = None) -> Exercise:
    """An exercise from the text of its YAML; `source` names it in errors (a file, or a run's exercise.yaml), each
    `source:line: ...` with the closest known name. `others`: every exercise's variants, to check the names of
    another exercise's variants (`baseline:base.val_loss`) against; None leaves them to the store."""
    raw, lines = validate(text, source)
    claims = [Claim(**c) for c in raw.pop("claims", None) or []]
    ex = Exercise(name=name, claims=claims, **raw)
    if problem := ui.problem(ex.ui, ex.variants):
        raise lines.error(("ui",), problem)
    ex.variants = {k: list(v or []) for k, v in ex.variants.items()}
    for v in ex.variants:
        if not v.isidentifier():
            raise lines.error(("variants", v), f"variant {v!r} must be a name usable in a check (letters, digits, _)")
    if ex.budget is not None and ex.budget not in ex.variants:
        raise lines.error(("budget",), f"budget names no variant: {ex.budget!r}{suggest(ex.budget, ex.variants)}; "
                                       f"the variants are {', '.join(ex.variants)}")
    if others is not None and ex.init_from is not None and ex.init_from not in others:
        raise lines.error(("init_from",), f"init_from names no exercise: {ex.init_from!r}"
                                          f"{suggest(ex.init_from, others)}")
    for k, entry in enumerate(ex.report or []):
        _check_entry(entry, ex, lines, ("report", k))
    for i, c in enumerate(ex.claims):
        where, what = ("claims", i), f"claim {c.text[:40]!r}…"
        if problem := c.problem():
            raise lines.error(where, f"{what} {problem}")
        c.source = Source(c.source)
        if (c.source == Source.OURS) != bool(c.why):
            raise lines.error(where, f"{what} " + ("is ours: say why in `why:`" if not c.why
                              else "has a `why:`, which only a claim of ours (source: ours) gives"))
        if c.answer and not metrics.known(c.answer):
            raise lines.error((*where, "answer"), f"{what} answers with an unknown metric {c.answer!r}"
                                                  f"{_metric_hint(c.answer)}")
        for field_ in ("check", "ours"):
            if expr := getattr(c, field_):
                _check_expression(expr, ex, lines, (*where, field_), what, others)
    return ex


def _metric_hint(key: str) -> str:
    found = metrics.closest(key)
    return f" (did you mean {found!r}?)" if found else ""


def _check_entry(entry: dict, ex: "Exercise", lines, where) -> None:
    """A report entry's metrics logged by some run and its variants the file's."""
    for option in METRIC_OPTIONS:
        value = entry.get(option)
        for key in [value] if isinstance(value, str) else value or []:
            if not metrics.known(key):
                raise lines.error((*where, option), f"report entry {where[1] + 1} (kind: {entry['kind']}) names an "
                                                    f"unknown metric {key!r}{_metric_hint(key)}")
    for option in VARIANT_OPTIONS:
        for v in entry.get(option) or []:
            if v not in ex.variants:
                raise lines.error((*where, option), f"report entry {where[1] + 1} (kind: {entry['kind']}) names an "
                                                    f"unknown variant {v!r}{suggest(v, ex.variants)}; the variants "
                                                    f"are {', '.join(ex.variants)}")


def _check_expression(expr: str, ex: "Exercise", lines, where, what: str, others) -> None:
    """A check's syntax, each variant it names (its own exercise's, or another's) and each metric."""
    try:
        named = terms(tree(expr))
    except SyntaxError as e:
        raise lines.error(where, f"{what} {where[-1]}: {expr!r} is not an expression: {e.msg}") from None
    for variant, key, _ in named:
        owner, _, v = variant.rpartition(":")
        if not owner and v not in ex.variants:
            raise lines.error(where, f"{what} names unknown variants [{v!r}]{suggest(v, ex.variants)}; the variants "
                                     f"are {', '.join(ex.variants)}")
        if owner and others is not None and v not in others.get(owner, ex.variants if owner == ex.name else ()):
            if owner not in others and owner != ex.name:
                raise lines.error(where, f"{what} names an unknown exercise {owner!r}{suggest(owner, others)}")
            raise lines.error(where, f"{what} names unknown variants [{variant!r}]"
                                     f"{suggest(v, others.get(owner, ex.variants))}")
        if not metrics.known(key):
            raise lines.error(where, f"{what} reads an unknown metric {v}.{key}{_metric_hint(key)}")


def folder() -> Path:
    """The exercise files: $TINYGPT_EXPERIMENTS if set, else the project's experiments/."""
    chosen = os.environ.get(FOLDER_VARIABLE)
    if not chosen:
        return EXPERIMENTS
    if not Path(chosen).is_dir():
        raise ConfigError(f"{FOLDER_VARIABLE}={chosen} is not a folder of exercise files")
    return Path(chosen)


def load_all() -> dict[str, Exercise]:
    """Every exercise file, each checked against the others' variants for the checks that name them."""
    texts = {p.stem: (p.read_text(encoding="utf-8"), p.name) for p in sorted(folder().glob("*.yaml"))}
    others = {}
    for name, (text, _) in texts.items():
        try:
            others[name] = list((yaml.safe_load(text) or {}).get("variants") or {})
        except (yaml.YAMLError, AttributeError, TypeError):
            others[name] = []   # its own parse says what is wrong
    return {name: parse(name, text, source, others) for name, (text, source) in texts.items()}


def select(names, known: dict[str, Exercise] | None = None) -> list[Exercise]:
    """`all`, a comma-separated string or a list; unknown names are one error before any work. `known`: the
    exercises to choose from, else the files."""
    known = load_all() if known is None else known
    if names in (None, "all", ["all"]):
        return list(known.values())
    wanted = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if str(n).strip()]
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        raise ConfigError(f"unknown ablation {', '.join(map(repr, unknown)) or '(none given)'}; "
                          f"the exercises are {', '.join(known)}")
    return [known[n] for n in wanted]


# --- the check language: a safe subset of Python expressions ---------------------------------------------
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.USub: operator.neg, ast.Not: operator.not_}


QUALIFIED = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*):([A-Za-z_]\w*)\.")


@functools.lru_cache(maxsize=4096)
def tree(expr: str) -> ast.Expression:
    """A check's syntax tree; `exercise:variant.key` is read as `exercise.variant.key`. Parsed once per text (a
    table evaluates each check on every look, the calibration on thousands of tables): shared, not to be changed."""
    return ast.parse(QUALIFIED.sub(r"\1.\2.", expr), mode="eval")


@functools.lru_cache(maxsize=65536)
def term(node) -> tuple[str, str, int | None] | None:
    """(variant, key, step) when the node names one number: `v.key`, `v.key[step]`, `exercise.v.key`,
    `exercise.v.key[step]` (its variant "exercise:v"); None for any other node."""
    step = None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        node, step = node.value, int(node.slice.value)
    match node:
        case ast.Attribute(value=ast.Name(id=variant), attr=key) if not _private(variant, key):
            return variant, key, step
        case ast.Attribute(value=ast.Attribute(value=ast.Name(id=exercise), attr=variant), attr=key) \
                if not _private(exercise, variant, key):
            return f"{exercise}:{variant}", key, step
    return None


def _private(*names: str) -> bool:
    """A name like `__class__`: never a variant or a metric, and not allowed in a check."""
    return any(n.startswith("_") for n in names)


@functools.lru_cache(maxsize=16384)
def terms(node) -> list[tuple[str, str, int | None]]:
    """The (variant, key, step) numbers an expression (or a node of one: of tree's shared trees, so once each) reads,
    in the order it names them; not to be changed."""
    found = {}

    def visit(n):
        t = term(n)
        if t is not None:
            found[t] = None
            return
        for child in ast.iter_child_nodes(n):
            visit(child)

    visit(node)
    return list(found)


def referenced(expr: str) -> set[str]:
    """The variants of its own exercise an expression names (not another exercise's)."""
    return {v for v, _, _ in terms(tree(expr)) if ":" not in v}


def evaluate(expr: str, lookup, functions=FUNCTIONS):
    """The value of a check. `lookup(variant, key, step)` gives a number or tag, or raises NotRun. `functions`: what
    abs, min and max are (numpy's, to evaluate a check on arrays, one number a seed)."""

    def ev(n):
        match n:
            case ast.Expression(body=b):
                return ev(b)
            case ast.Constant(value=v):
                return v
            case _ if term(n) is not None:
                return lookup(*term(n))
            case ast.BoolOp(op=ast.And(), values=vs):
                return all(ev(v) for v in vs)
            case ast.BoolOp(op=ast.Or(), values=vs):
                return any(ev(v) for v in vs)
            case ast.BinOp(left=a, op=op, right=b) if type(op) in _OPS:
                return _OPS[type(op)](ev(a), ev(b))
            case ast.UnaryOp(op=op, operand=a) if type(op) in _OPS:
                return _OPS[type(op)](ev(a))
            case ast.Compare(left=a, ops=ops, comparators=cs):
                left = ev(a)
                for op, c in zip(ops, cs):
                    right = ev(c)
                    if not _OPS[type(op)](left, right):
                        return False
                    left = right
                return True
            case ast.Call(func=ast.Name(id=f), args=args) if f in FUNCTIONS:
                return functions[f](*(ev(a) for a in args))
            case ast.List(elts=es) | ast.Tuple(elts=es):
                return [ev(e) for e in es]
        raise ValueError(f"not allowed in a check: {ast.unparse(n)!r}")

    return ev(tree(expr))
