"""An exercise's charts in MLflow's UI, from its YAML's `ui:` block: what `make ui` opens each exercise on.

    ui:
      lines: [val_loss_at_position against position, val_loss]   # curves: over steps, or against another metric
      dots: [val_loss against n_params]                          # each variant's final values, one against another
      bars: [val_loss]                                           # each variant's final value
      apart:                                                     # variants charted in a view of their own
        name: One-step probes at initialisation
        variants: [scaled_d64, unscaled_d64]
        bars: [init_score_std]

Without the block: the validation curve (unless the exercise trains nothing), then, as bars, the final values its
claims read. An exercise of one variant has no bars unless its block names them: a bar chart of one variant is one
bar, which compares nothing (lm/tracking/views.py draws them).
"""
from dataclasses import dataclass
from enum import StrEnum

AGAINST = " against "
APART = "apart"
EXAMPLE = "ui: {lines: [val_loss, val_loss against train_time_s], dots: [val_loss against n_params], bars: [val_loss]}"


class ChartKind(StrEnum):
    """A chart's kind, as MLflow's runs page names it."""
    LINE = "LINE"        # a curve per variant (or seed): over the steps, or against another metric logged with it
    SCATTER = "SCATTER"  # a dot per variant (or seed): one final value against another
    BAR = "BAR"          # a bar per variant (or seed): its final value


CHART_KINDS = {"lines": ChartKind.LINE, "dots": ChartKind.SCATTER, "bars": ChartKind.BAR}  # a ui: block's words


@dataclass(frozen=True)
class Chart:
    kind: ChartKind
    metric: str             # the y axis
    x: str | None = None    # the x axis: another metric (a line against it, a dot's position); None: the step


@dataclass(frozen=True)
class Panel:
    """One view of an exercise's runs: the variants it shows and its charts, first to last."""
    name: str
    variants: tuple[str, ...]
    charts: tuple[Chart, ...]
    apart: bool = False     # the exercise's variants charted apart from the others (the `apart:` block)


def chart(kind: str, text: str) -> Chart:
    """`val_loss` or `val_loss against train_time_s` under lines, dots or bars."""
    metric, _, x = text.partition(AGAINST)
    return Chart(CHART_KINDS[kind], metric.strip(), x.strip() or None)


def _charts(block: dict, trains: bool, final: list[str], one_variant: bool) -> tuple[Chart, ...]:
    lines = block.get("lines", ["val_loss"] if trains else [])
    bars = block.get("bars", [] if one_variant else final)
    return tuple(chart(kind, text) for kind, texts in (("lines", lines), ("dots", block.get("dots", [])),
                                                       ("bars", bars)) for text in texts)


def panels(ex, final: list[str]) -> list[Panel]:
    """The exercise's views: its variants (but those charted apart), then those apart, if any. final: the final
    values its claims read, the bars of an exercise without a `ui:` block."""
    block = ex.ui or {}
    apart = block.get(APART)
    away = tuple(apart["variants"]) if apart else ()
    shown = tuple(v for v in ex.variants if v not in away)
    out = [Panel(ex.title, shown, _charts(block, not ex.init_from, final, len(shown) == 1))]
    if apart:
        out.append(Panel(apart["name"], away, _charts(apart, not ex.init_from, final, len(away) == 1), apart=True))
    return out


def final_values(ex) -> list[str]:
    """The final values the `ui:` block charts (bars, and both axes of dots), in its order."""
    block = ex.ui or {}
    keys = {}
    for part in (block, block.get(APART) or {}):
        for kind in ("dots", "bars"):
            for c in (chart(kind, t) for t in part.get(kind, [])):
                keys.update(dict.fromkeys(filter(None, (c.metric, c.x))))
    return list(keys)


def problem(raw, variants) -> str | None:
    """What is wrong with a `ui:` block, in words; None when it is whole."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not set(raw) <= {*CHART_KINDS, APART}:
        return f"ui must name metrics to chart as lines, dots and bars: {EXAMPLE}"
    for part in (raw, raw.get(APART) or {}):
        for kind in CHART_KINDS:
            texts = part.get(kind, [])
            if not isinstance(texts, list) or not all(isinstance(t, str) and t.strip() for t in texts):
                return f"ui: {kind} must be a list of metric names: {EXAMPLE}"
            if kind == "dots" and not all(AGAINST in t for t in texts):
                return f"ui: each of dots is 'y against x' (dots: [val_loss against n_params])"
    apart = raw.get(APART)
    if apart is not None:
        if not isinstance(apart, dict) or not set(apart) <= {"name", "variants", *CHART_KINDS} or \
                not isinstance(apart.get("name"), str) or not isinstance(apart.get("variants"), list):
            return "ui: apart is a view of its own: apart: {name: ..., variants: [...], bars: [...]}"
        unknown = [v for v in apart["variants"] if v not in variants]
        if unknown or not apart["variants"] or len(apart["variants"]) == len(variants):
            return f"ui: apart names {apart['variants']}: some but not all of the variants {list(variants)}"
    return None
