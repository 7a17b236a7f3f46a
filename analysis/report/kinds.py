"""The generic figure kinds an exercise's `report:` block chooses from, each a small renderer with options.

    report:
      - kind: curves          # metrics over steps per variant, with seed bands
        metrics: [train_loss, val_loss]
      - kind: sweep           # a final metric against each swept value, with seed intervals
        metric: val_loss

A kind is a dataclass: its fields are the entry's options, so an option it does not have is one error before the
report starts. `histories()` and `artifacts()` say what it reads beyond search_runs, fetched for every finished run
of the exercise before anything is drawn; `render(ctx)` writes to the exercise's section.
"""
import re
from dataclasses import dataclass, field, fields
from typing import ClassVar

import numpy as np
import pandas as pd

from analysis.report import marks, numbers
from analysis.report.document import Doc, figure_file
from analysis.report.painter import Plot, plot
from analysis.store_reading.reader import ExerciseRuns
from analysis.verdicts import stats
from lm.settings.exercises import Exercise, terms, tree

SEPARATOR = "\n\n---\n\n"   # between samples in samples.txt
# How a metric is named in figures; any other is shown under its own key.
LABELS = {"train_loss": "training loss (each step's batch)", "val_loss": "validation loss",
          "honest_val_loss": "honest validation loss", "uniform_loss": "uniform guess", "bigram_loss": "bigram table",
          "val_loss_at_position": "validation loss", "word_validity": "words as split on spaces",
          "word_validity_stripped": "punctuation stripped", "train_time_s": "training seconds"}


@dataclass
class Context:
    """What a renderer writes with: the document, the exercise's runs and every run's heads.csv table."""
    doc: Doc
    er: ExerciseRuns
    heads: dict[str, pd.DataFrame]
    used: set = field(default_factory=set)

    def figure(self, what: str, p: Plot, caption: str):
        """A figure named <exercise>_<what>, numbered when the section has two of a kind."""
        base = figure_file(f"{self.er.exercise.name}_{what}")
        name, k = base, 2
        while name in self.used:
            name, k = f"{base}{k}", k + 1
        self.used.add(name)
        self.doc.figure(name, p, caption)

    def marks(self, keys, labels: dict | None = None) -> list[dict]:
        """What the exercise's claims say the numbers of `keys` should be (marks.py), each with the label its metric
        has in the figure as `metric`."""
        return [{**m, "metric": label(m["key"], labels)} for m in marks.of(self.er.exercise, set(keys))]


# --- helpers shared with the frame and the exercises' own sections ---------------------------------------------
def what_changes(ex: Exercise, variant: str) -> str:
    return ", ".join(ex.variants.get(variant, [])) or "(as the exercise's base)"


def first_seed_note(er: ExerciseRuns, variant: str) -> str:
    run = er.first(variant)
    return f"{variant}, seed {run.seed}" if run is not None else variant


def samples(er: ExerciseRuns, variant: str) -> list[str]:
    run = er.first(variant)
    path = run is not None and er.reader.artifact(run.run_id, "samples.txt")
    return path.read_text(encoding="utf-8").split(SEPARATOR) if path else []


def label(key: str, labels: dict | None = None) -> str:
    return (labels or {}).get(key) or LABELS.get(key, key)


def seeds_note(er: ExerciseRuns, variants) -> str:
    n = max((len(er.rows(v)) for v in variants), default=0)
    return f"{n} seed{'s' * (n != 1)}"


def _keys(metric, metrics, default=("val_loss",)) -> list[str]:
    """An entry's metrics: `metrics: [a, b]`, or `metric: a` for one."""
    return list(metrics or ([metric] if metric else default))


def _final_table(ctx: Context, variants: list[str], keys: list[str], swept: list[str] = ()) -> None:
    """Per variant and metric: mean ± std, seeds and the 95% interval of the mean, the notebook API's numbers."""
    er, rows = ctx.er, []
    for v in variants:
        for key in keys:
            values = er.values(v, key)
            s = stats.summary(values)
            interval = "-" if np.isnan(s["low"]) else f"{s['low']:.3f} to {s['high']:.3f}"
            rows.append({"variant": v, **{k: er.param(v, k) for k in swept},
                         **({} if swept else {"changes": what_changes(er.exercise, v)}),
                         "metric": key, "mean ± std": numbers.mean_std(values), "seeds": s["n"],
                         "95% interval of the mean": interval})
    ctx.doc.table(pd.DataFrame(rows), fold="The numbers: mean ± std, seeds and the 95% interval of each mean")


# --- the kinds ---------------------------------------------------------------------------------------------
@dataclass
class SectionKind:
    name: ClassVar[str] = ""

    def histories(self) -> list[str]:
        return []

    def artifacts(self) -> list[str]:
        return []

    def render(self, ctx: Context) -> None:
        raise NotImplementedError


@dataclass
class Curves(SectionKind):
    """Metrics over steps, one line per variant and metric: the mean over seeds with a ± 1 std band. `baselines`:
    final metrics drawn as horizontal lines (the mean over every run)."""
    name: ClassVar[str] = "curves"
    metrics: list[str] | None = None
    metric: str | None = None
    baselines: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    title: str | None = None

    def histories(self):
        return _keys(self.metric, self.metrics)

    def render(self, ctx):
        er = ctx.er
        parts = [er.history(v, m).assign(variant=v, metric=label(m, self.labels))
                 for v in er.variants for m in self.histories()]
        parts = [p for p in parts if len(p)]
        if not parts:
            return ctx.doc.p(f"No curve of {', '.join(self.histories())} was logged.")
        lines = {}
        for b in self.baselines:
            values = [x for v in er.variants for x in er.values(v, b)]
            if values:
                lines[f"{label(b, self.labels)}, {np.mean(values):.3f}"] = float(np.mean(values))
        names = " and ".join(label(m, self.labels) for m in self.histories())
        title = f"{self.title or er.exercise.title + ': ' + names + ' against step'} ({seeds_note(er, er.variants)})"
        drawn = [m for m in ctx.marks(self.histories(), self.labels) if m["variant"] in er.variants]
        ctx.figure(self.name, plot("curves", pd.concat(parts, ignore_index=True), lines, title, drawn),
                   f"{names[0].upper() + names[1:]} against step, one line per variant"
                   f"{' and metric' if len(self.histories()) > 1 else ''}: the mean over seeds with a ± 1 std band"
                   + (f"; the horizontal lines are {', '.join(lines)}" if lines else "")
                   + ("; red: what the claims say (a cross: the lesson's number at that step)" if drawn else "")
                   + ".")


@dataclass
class Final(SectionKind):
    """Final values per variant: mean ± std, seeds and the 95% interval of the mean, as a table and a figure."""
    name: ClassVar[str] = "final"
    metrics: list[str] | None = None
    metric: str | None = None

    def render(self, ctx):
        er, keys = ctx.er, _keys(self.metric, self.metrics)
        df = pd.DataFrame([{"variant": v, "metric": k, "seed": s, "value": x}
                           for v in er.variants for k in keys
                           for s, x in zip(er.rows(v)["seed"], er.rows(v).get(f"metrics.{k}", []))
                           if x is not None and not pd.isna(x)])
        if len(df):
            drawn = ctx.marks(keys, {k: k for k in keys})
            ctx.figure(self.name, plot("finals", df, f"{er.exercise.title}: final values", drawn),
                       "Final value per variant, one panel per metric: each seed a dot, the mean over seeds with its "
                       "95% t-interval (none with one seed) beside them"
                       + ("; red: what the claims say (a bar: the lesson's number; shaded: the band a check asks "
                          "for; a triangle: the edge of a one-sided one)." if drawn else "."))
        _final_table(ctx, er.variants, keys)


@dataclass
class Sweep(SectionKind):
    """A final metric against each swept value: each param the variants set to different values, the mean over
    seeds with its 95% interval, and every seed."""
    name: ClassVar[str] = "sweep"
    metrics: list[str] | None = None
    metric: str | None = None
    percent: bool = False      # shares of 1, shown as percentages from 0 to 100%
    ylabel: str | None = None

    def swept(self, er: ExerciseRuns) -> list[str]:
        keys = dict.fromkeys(o.split("=")[0].lstrip("+~") for v in er.exercise.variants.values() for o in v)
        return [k for k in keys if len({er.param(v, k) for v in er.variants} - {None}) > 1]

    def render(self, ctx):
        er, keys = ctx.er, _keys(self.metric, self.metrics)
        swept = self.swept(er)
        if not swept:
            return ctx.doc.p("Nothing to sweep: no param takes two values among the variants run.")
        rows = []
        for v in er.variants:
            for key in keys:
                for s, x in zip(er.rows(v)["seed"], er.rows(v).get(f"metrics.{key}", [])):
                    if x is not None and not pd.isna(x):
                        rows.append({"variant": v, "metric": label(key), "seed": s, "value": float(x),
                                     **{k: _number(er.param(v, k)) for k in swept}})
        if rows:
            ylabel = self.ylabel or (label(keys[0]) if len(keys) == 1 else "value")
            drawn = ctx.marks(keys)
            ctx.figure(self.name, plot("sweep", pd.DataFrame(rows), swept, er.exercise.title, ylabel, self.percent,
                                       drawn),
                       f"Final {', '.join(keys)} against each swept value ({', '.join(swept)}): each seed a dot, the "
                       f"mean over seeds with its 95% t-interval (none with one seed)"
                       + ("; red: what the claims say." if drawn else "."))
        _final_table(ctx, er.variants, keys, swept)


def _number(value):
    """A param's text as the number it holds (4, not 4.0), else as it is."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return value
    return int(x) if x.is_integer() else x


@dataclass
class Heads(SectionKind):
    """Head statistics per variant as heatmaps: a row per statistic, a column per variant, a cell per (block,
    head), the mean over seeds of heads.csv."""
    name: ClassVar[str] = "heads"
    statistics: list[str] = field(default_factory=lambda: [
        "prev_token_score", "dup_token_score", "word_start_score", "induction_score", "entropy_norm",
        "positional_score"])

    def render(self, ctx):
        er, maps = ctx.er, {}
        for v in er.variants:
            tables = [ctx.heads[r] for r in er.rows(v)["run_id"] if r in ctx.heads]
            if tables:
                maps[v] = pd.concat(tables).groupby(["block", "head"], as_index=False).mean(numeric_only=True)
        stats_ = [s for s in self.statistics if any(s in t and t[s].notna().any() for t in maps.values())]
        if not maps or not stats_:
            return ctx.doc.p("No head statistics (heads.csv) in this exercise's runs.")
        ctx.figure(self.name, plot("head_maps", maps, stats_, f"{er.exercise.title}: head statistics"),
                   "Each head's statistics (heads.csv: blocks down, heads across, numbered from 1), the mean over "
                   "seeds; the colours run from 0 to 1 for a statistic that is a share, else over its range.")


@dataclass
class Attention(SectionKind):
    """Every head's attention on the corpus's heatmap line, for the lowest seed of each variant."""
    name: ClassVar[str] = "attention"
    variants: list[str] | None = None

    def artifacts(self):
        return ["attention.json"]

    def render(self, ctx):
        er = ctx.er
        chosen = [v for v in (self.variants or er.variants) if v in er.variants]
        maps = [(v, er.reader.json(er.first(v).run_id, "attention.json")) for v in chosen]
        maps = [(v, a) for v, a in maps if a]
        if not maps:
            return ctx.doc.p("No attention maps (attention.json) in this exercise's runs.")
        line = "".join(maps[0][1]["chars"])
        ctx.figure(self.name, plot("attention_grid", maps, f"{er.exercise.title}: every head on {line!r}"),
                   f"Attention weights of every head ({'; '.join(first_seed_note(er, v) for v, _ in maps)}) on "
                   f"{line!r}: one row per query character, one column per key it reads; above the diagonal is "
                   f"masked. ␣ is a space.")


@dataclass
class ByPosition(SectionKind):
    """The loss at each position of the window, one line per variant, mean over seeds; at the positions the
    exercise's claims compare, each seed as a dot."""
    name: ClassVar[str] = "by_position"
    metric: str = "val_loss_at_position"

    def histories(self):
        return [self.metric]

    def render(self, ctx):
        er = ctx.er
        parts = [er.history(v, self.metric).assign(variant=v) for v in er.variants]
        df = pd.concat([p for p in parts if len(p)] or [pd.DataFrame()], ignore_index=True)
        if not len(df):
            return ctx.doc.p(f"No {self.metric} was logged.")
        compared = {(v, step) for c in er.exercise.claims for expr in (c.check, c.ours) if expr
                    for v, key, step in terms(tree(expr).body) if key == self.metric and step is not None}
        points = df[[(v, s) in compared for v, s in zip(df["variant"], df["step"])]]
        what = label(self.metric)
        ctx.figure(self.name, plot("by_position", df, points, f"{er.exercise.title}: {what} by position in the window",
                                   "position in the window (characters of context before it)", what),
                   "Loss of the prediction at each position of the window, one line per context: the mean over seeds "
                   "with a ± 1 std band. A position sees that many characters before it, so the curve shows what more "
                   "context buys, and where a short context stops"
                   + ("; at the positions the claims compare, each seed is a dot beside the mean and its 95% "
                      "interval." if len(points) else "."))


@dataclass
class Samples(SectionKind):
    """The first sample of each variant's lowest seed, or with `join` all of its (short) samples on one line.
    `heading` may name the variant and any param: "Temperature {sample.temperature}"."""
    name: ClassVar[str] = "samples"
    variants: list[str] | None = None
    heading: str = "A sample from {variant}"
    limit: int | None = None
    join: bool = False

    def artifacts(self):
        return ["samples.txt"]

    def render(self, ctx):
        er = ctx.er
        for v in [v for v in (self.variants or er.variants) if v in er.variants]:
            texts = samples(er, v)
            if not texts:
                continue
            head = re.sub(r"\{([\w.]+)\}", lambda m: v if m[1] == "variant" else str(er.param(v, m[1])), self.heading)
            if self.join:
                ctx.doc.h(3, f"{head} ({first_seed_note(er, v)}, {len(texts)} samples)")
                ctx.doc.p(", ".join(t.strip() or "(empty)" for t in texts))
            else:
                ctx.doc.h(3, f"{head} ({first_seed_note(er, v)}, sample 1 of {len(texts)})")
                ctx.doc.pre(texts[0][:self.limit])


@dataclass
class AgainstTime(SectionKind):
    """A metric against training time (validation excluded) and, beside it, against steps, one line per variant;
    an exercise with a `budget` variant gets its mean training time as a dashed line."""
    name: ClassVar[str] = "against_time"
    metric: str = "val_loss"
    time: str = "train_time_s"

    def histories(self):
        return [self.metric, self.time]

    def render(self, ctx):
        er = ctx.er
        parts = []
        for v in er.variants:
            value = er.history(v, self.metric)
            time_ = er.history(v, self.time).rename(columns={"value": "time"})
            start = value[value["step"] == 0][["seed", "step"]].assign(time=0.0)
            both = value.merge(pd.concat([start, time_], ignore_index=True), on=["seed", "step"])
            parts.append(both.assign(variant=v))
        curves = pd.concat(parts, ignore_index=True)
        if not len(curves):
            return ctx.doc.p(f"No {self.metric} against {self.time} was logged.")
        table = er.budget()
        budget = float(table["budget_s"].iloc[0]) if table is not None and len(table) else None
        what = label(self.metric)
        ctx.figure(self.name, plot("against_time", curves, budget, er.exercise.budget, f"{er.exercise.title}: {what}",
                                   what),
                   f"{what[0].upper() + what[1:]} against training seconds (validation excluded) and against steps, "
                   f"one line per variant"
                   + (f"; the dashed line is the budget, {er.exercise.budget}'s training time." if budget else "."))


SECTION_KINDS = {k.name: k for k in (Curves, Final, Heads, Attention, ByPosition, Samples, AgainstTime, Sweep)}


def options(kind: type[SectionKind]) -> list[str]:
    return [f.name for f in fields(kind)]
