"""An exercise's section of the report, as the `report:` block of its YAML declares it.

Each entry names a kind: a generic one from analysis/report/kinds.py (curves, final, heads, attention, by_position,
samples, against_time, sweep), or a module of this package of that name, for what only one exercise needs
(`kind: scaling` is sections/scaling.py). A module has `render(ctx, **options)` and may list what it reads
in HISTORIES and ARTIFACTS. An exercise without a `report:` block gets DEFAULT. The section comes from the
exercise itself, so renaming its file renames the section and keeps its figures.
"""
import importlib
import inspect
import pkgutil
from dataclasses import dataclass

from analysis.report.kinds import SECTION_KINDS, Context, SectionKind, options
from lm.settings.errors import ConfigError
from lm.settings.exercises import Exercise

DEFAULT = [{"kind": "curves", "metrics": ["val_loss"]}, {"kind": "final", "metrics": ["val_loss"]}]


def modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(__path__))


@dataclass
class Module(SectionKind):
    """A section module used as a kind: its options go to its render()."""
    module: object = None
    kwargs: dict = None

    def histories(self):
        return list(getattr(self.module, "HISTORIES", []))

    def artifacts(self):
        return list(getattr(self.module, "ARTIFACTS", []))

    def render(self, ctx: Context):
        self.module.render(ctx, **self.kwargs)


def entries(ex: Exercise) -> list[SectionKind]:
    """The exercise's report entries as renderers; a kind or an option that does not exist is one error."""
    out = []
    for k, entry in enumerate(DEFAULT if ex.report is None else ex.report, start=1):
        where = f"{ex.name}: report entry {k} (kind: {entry.get('kind')})"
        opts = {key: value for key, value in entry.items() if key != "kind"}
        kind = SECTION_KINDS.get(entry["kind"])
        if kind is not None:
            try:
                out.append(kind(**opts))
            except TypeError:
                unknown = sorted(set(opts) - set(options(kind)))
                raise ConfigError(f"{where}: unknown option {', '.join(unknown)}; its options are "
                                  f"{', '.join(options(kind)) or '(none)'}") from None
            continue
        if entry["kind"] not in modules():
            raise ConfigError(f"{where}: unknown kind; the kinds are {', '.join(SECTION_KINDS)}, or a module of "
                              f"analysis/report/sections/: {', '.join(modules())}")
        module = importlib.import_module(f"{__name__}.{entry['kind']}")
        try:
            inspect.signature(module.render).bind(None, **opts)
        except TypeError as e:
            raise ConfigError(f"{where}: {e}") from None
        out.append(Module(module=module, kwargs=opts))
    return out


def render(ctx: Context, parts: list[SectionKind]) -> None:
    """The exercise's pictures: each entry in order; 'Not run' when nothing of it finished. The frame puts them
    under the exercise's title and its claims."""
    ex = ctx.er.exercise
    if not ctx.er.variants:
        return ctx.doc.p(f"Not run: the {ex.name} exercise has no finished run in this store.")
    for part in parts:
        part.render(ctx)
