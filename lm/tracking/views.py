"""Saved views of MLflow's runs page on every exercise: its seeds charted by variant (the view an experiment opens
on, lm/commands/ui_app.py), its runs in a table, and, where its `ui:` block sets variants apart, those charted in a
view of their own.

MLflow 3's runs page keeps its state (grouping, charts, columns) in the browser, and saves a named copy of it as
an experiment tag `mlflow.sharedViewState.<key>` holding {name, createdAt, updatedAt, state}, where state is
the page's state as JSON. Such a view is listed in the page's "Views" menu, and
`#/experiments/<id>/runs?viewStateShareKey=<key>` opens it.

A charts view shows the child runs (not the parent) grouped by the `variant` tag, each group the mean of its seeds
with their min-max band in the line charts, and leads with the exercise's own charts, from its YAML's `ui:` block
(lm/settings/ui.py), two to a row so that their legends show every variant: `lines` (curves over steps, or against
another metric: the loss against the training time, the loss by position against the position), `dots` (each
variant's final value against another: the loss against the parameter count) and `bars` (each variant's final
value). Every line chart spans its values, not zero to them: curves over training from the first validation after
step 0. Where the lesson gives a curve of its own (the claims' numbers at steps, lm/tracking/reference.py), the
variant's line is drawn beside the lesson's. MLflow adds a chart of its own for every metric no chart names, sorted
by name, before or among ours: the suite, once the runs are done, names every other metric in one last section,
folded, so that the page opens on the exercise's charts; there, a metric only one variant has is a line (a dot per
variant at its step), not a bar, since one bar compares nothing.

MLflow's runs page titles a chart by its metrics ("val_loss", "val_loss vs lesson_val_loss", "n_params vs.
val_loss") and labels a line chart's x axis by what it is drawn against ("Step", or the metric's name): neither
can be set. So a curve whose x is not a training step is drawn against a metric logged beside it
(`val_loss_at_position` against `position`), which names the axis.

The table view shows the runs, the parent with each variant's mean ± std and seed count of the charted final values
(lm/tracking/aggregates.py), the validation loss's first, and beside each run its validation loss, training time,
Duration, seed, the run it was copied from and that run's Duration.
"""
import base64
import dataclasses
import json
import time
import zlib

from lm.settings import ui
from lm.settings.exercises import Exercise
from lm.settings.ui import Chart, ChartKind, Panel
from lm.tracking import aggregates, reference

PREFIX = "mlflow.sharedViewState."
KEY = "tinygpt-seeds-by-variant"
NAME = "Seeds by variant"
APART_KEY = "tinygpt-apart"
TABLE_KEY = "tinygpt-runs-and-means"
TABLE_NAME = "Runs and means"
OTHERS = "Every other metric"
# MLflow 3's UI opens on its GenAI pages unless the URL says otherwise: its sidebar switch (GenAI / Model training)
# is kept in the browser, defaults to GenAI, and decides what an experiment opens on (3.17 reads the switch, not
# the mlflow.experimentKind tag). workflowType=machine_learning in the URL sets it for the page, in any browser.
RUNS = "runs?workflowType=machine_learning"
# The charts view's runs: the children, named <variant>/seed<n>; the parent's metrics are its summaries. In name
# order: sorted by creation (the default), the page fetches each child's parent too, which has no variant and would
# be charted as a group of its own, "Unassigned".
SEEDS_ONLY = "attributes.run_name LIKE '%/seed%'"
BY_NAME = "tags.`mlflow.runName`"
TRAINING_TIME = "train_time_s"
COPIED_FROM = "copied_from"
SOURCE_DURATION = "source_duration"
DEFLATED = "deflate;"
SUMMARY_WIDTH = 165  # pixels: "2.962 ± 0.012 (3 seeds)" and "h1/knockout_head_max"
NUMBER_WIDTH = 95    # pixels: a metric's column, "2.19102214…" (MLflow prints every digit)
CURVES = ("val_loss", "val_perplexity", "train_loss")  # over training steps: their charts start after step 0
# Every metric a run logs at more than one step (lm/run/callbacks.py, lm/measures/end_of_run.py): a line where it is
# charted among every other metric, as MLflow would draw it (one with a single step is a bar there).
SERIES = (*CURVES, "honest_val_loss", "train_time_s", "val_loss_at_position", "val_loss_at_position_se", "position")
# Two charts to a row, each 540 px wide at a 1600 px window: three to a row left "ctx16 (val_loss_at_position)"
# one legend line each, and the chart's legend showed two of its three (MLflow clips it to the card).
COLUMNS = 2
CARD_HEIGHT = 300  # pixels: two rows of them below the page's header at 1600 × 1000 (MLflow's own: 360)


def has_view(exp, key: str = KEY) -> bool:
    return f"{PREFIX}{key}" in exp.tags


def route(experiment_id: str, key: str = KEY) -> str:
    """The address of an experiment's runs page opened on one of its saved views, after the page's `#`."""
    mode = "&compareRunsMode=TABLE" if key == TABLE_KEY else "&compareRunsMode=CHART"
    return f"/experiments/{experiment_id}/{RUNS}{mode}&viewStateShareKey={key}"


def link(base: str, exp, key: str = KEY) -> str:
    """The experiment's runs page, opened on one of its saved views."""
    return f"{base}/#{route(exp.experiment_id, key)}"


def panels(ex: Exercise) -> list[Panel]:
    """The exercise's charts views: its own, then the variants it charts apart (lm/settings/ui.py)."""
    return ui.panels(ex, [k for k in aggregates.headline(ex) if k != "val_perplexity"])


def key_of(panel: Panel) -> str:
    """The saved view a panel is."""
    return APART_KEY if panel.apart else KEY


def lesson_keys(ex: Exercise, panel: Panel, chart: Chart) -> list[str]:
    """A line's metrics: its own, and the lesson's series of it where the lesson gives one for a variant the panel
    shows (lm/tracking/reference.py)."""
    lesson = chart.kind == ChartKind.LINE and chart.x is None and \
        any(m == chart.metric and v in panel.variants for v, m in reference.series(ex))
    return [chart.metric, *([reference.key(chart.metric)] if lesson else [])]


def title(ex: Exercise, panel: Panel, chart: Chart) -> str:
    """The chart's title as MLflow's runs page writes it (it cannot be set): its metrics."""
    if chart.kind == ChartKind.SCATTER:
        return f"{chart.x} vs. {chart.metric}"
    return " vs ".join(lesson_keys(ex, panel, chart))


def _card(chart: Chart, section: str, **extra) -> dict:
    name = chart.metric if chart.x is None else f"{chart.metric}-against-{chart.x}"
    return {"uuid": f"tinygpt-{chart.kind.lower()}-{name}", "type": str(chart.kind), "runsCountToCompare": 100,
            "metricSectionId": section, "deleted": False, "isGenerated": False, "displayName": chart.metric,
            "metricKey": chart.metric, **extra}


def _line(chart: Chart, section: str, span: dict, metrics: list[str]) -> dict:
    x = {"xAxisKey": "step", "selectedXAxisMetricKey": ""} if chart.x is None else \
        {"xAxisKey": "metric", "selectedXAxisMetricKey": chart.x}
    return _card(chart, section, selectedMetricKeys=metrics, lineSmoothness=0, xAxisScaleType="linear",
                 scaleType="linear", range=span, **x, yAxisKey="metric", yAxisExpressions=[], ignoreOutliers=False,
                 useGlobalXaxisKey=False, useGlobalLineSmoothing=True)


def _dots(chart: Chart, section: str) -> dict:
    return _card(chart, section, xaxis={"key": chart.x, "type": "METRIC"}, yaxis={"key": chart.metric,
                                                                                  "type": "METRIC"})


def _bar(chart: Chart, section: str) -> dict:
    return _card(chart, section, selectedMetricKeys=[chart.metric])


def span(histories: list[list[tuple[int, float]]], after_start: bool = True, steps: bool = True) -> dict:
    """A line chart's range: over the values, 5% padded, from the first step after 0 that has a value (after_start:
    a curve over training, whose step 0 is the untrained model at a loss far above every later one, on whose scale
    the variants coincide) or from the first; with `steps`, the x axis from that step to the last."""
    points = [(s, v) for h in histories for s, v in h]
    first = min((s for s, _ in points if s > 0 or not after_start), default=None)
    if first is None:
        return {}
    values = [v for s, v in points if s >= first]
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or abs(high) * 0.05 or 0.05
    x = {"xMin": first, "xMax": max(s for s, _ in points)} if steps else {}
    return {**x, "yMin": low - pad, "yMax": high + pad}


def base_state() -> dict:
    """The runs page's state: the keys and values its own "Save as new view" writes (MLflow 3.17)."""
    return {
        "searchFilter": "", "orderByKey": "attributes.start_time", "orderByAsc": False, "startTime": "ALL",
        "lifecycleFilter": "Active", "datasetsFilter": [], "modelVersionFilter": "All Runs",
        "selectedColumns": ["attributes.`Dataset`", "metrics.`val_loss`", "tags.`seed`"],
        "columnOrder": [], "columnWidths": {}, "runsHiddenMode": "SHOW_ALL", "viewMaximized": False,
        "runListHidden": False, "isAccordionReordered": True, "hideEmptyCharts": True,
        "groupBy": None, "useGroupedValuesInCharts": True, "groupsExpanded": {},
        "globalLineChartConfig": {"xAxisKey": "step", "lineSmoothness": 0, "selectedXAxisMetricKey": ""},
        "compareRunSections": None, "compareRunCharts": None,
    }


def runs_filter(ex: Exercise, panel: Panel) -> str:
    """The panel's runs: the children of its variants (not those of the variants charted apart from them)."""
    others = [v for v in ex.variants if v not in panel.variants]
    return " and ".join([SEEDS_ONLY, *(f"tags.variant != '{v}'" for v in others)])


def state(ex: Exercise, panel: Panel | None = None, spans: dict[Chart, dict] | None = None,
          others: dict[str, int] | None = None) -> dict:
    """A charts view (the exercise's own panel unless given): its charts (spans: each line's range), then
    `others`, every other metric its runs have (each with the count of variants that have it), in a folded section:
    a bar chart where two variants or more have the metric, else a line (a dot per run: one bar compares nothing)."""
    panel = panel or panels(ex)[0]
    section, rest = "tinygpt-seeds-by-variant", "tinygpt-every-other-metric"
    spans = spans or {}
    charts = []
    for c in panel.charts:
        if c.kind == ChartKind.LINE:
            charts.append(_line(c, section, spans.get(c, {}), lesson_keys(ex, panel, c)))
        else:
            charts.append(_dots(c, section) if c.kind == ChartKind.SCATTER else _bar(c, section))
    # MLflow adds a chart for every metric of the runs that no chart has as its metricKey: the lessons' series and the
    # x axes too
    named = {c.metric for c in panel.charts}
    lesson = {k: 1 for c in panel.charts for k in lesson_keys(ex, panel, c)[1:]}
    for m, variants in {**lesson, **(others or {})}.items():
        if m not in named:
            kind = ChartKind.BAR if variants > 1 and m not in SERIES else ChartKind.LINE
            c = Chart(kind, m)
            charts.append(_bar(c, rest) if kind == ChartKind.BAR else _line(c, rest, {}, [m]))
    sections = [{"uuid": section, "name": panel.name, "display": True, "isReordered": True, "deleted": False,
                 "isGenerated": False, "columns": COLUMNS, "cardHeight": CARD_HEIGHT},
                {"uuid": rest, "name": OTHERS, "display": False, "isReordered": True, "deleted": False,
                 "isGenerated": False}]
    # every variant's runs as one line: the seeds' mean, with the band from their min to their max
    group = {"aggregateFunction": "average", "groupByKeys": [{"mode": "tag", "groupByData": "variant"}]}
    return {**base_state(), "searchFilter": runs_filter(ex, panel), "orderByKey": BY_NAME, "orderByAsc": True,
            "groupBy": group, "compareRunSections": sections, "compareRunCharts": charts}


def summarised(ex: Exercise) -> list[str]:
    """The final values the table shows each variant's summary of: the validation loss (where it trains), then
    those the charts read, then the rest its claims read."""
    charted = [m for p in panels(ex) for c in p.charts if c.kind != ChartKind.LINE for m in (c.metric, c.x) if m]
    rest = [k for k in aggregates.headline(ex) if k != "val_perplexity"]
    return list(dict.fromkeys([*([] if ex.init_from else ["val_loss"]), *charted, *rest]))


def table_state(ex: Exercise) -> dict:
    """The runs table: the parent's per-variant summaries, the validation loss's first, then each run's validation
    loss, training time, Duration, seed and, for a copy, what it copies; then the other summaries and the corpus."""
    first, *rest = [[f"tags.`{aggregates.prefix(v)}/{m}`" for v in ex.variants] for m in summarised(ex)]
    runs = ["metrics.`val_loss`", f"metrics.`{TRAINING_TIME}`", "tags.`seed`", f"tags.`{COPIED_FROM}`",
            f"tags.`{SOURCE_DURATION}`"]
    columns = [*first, *runs, *(c for cs in rest for c in cs), "attributes.`Dataset`"]
    at = len(first) + 2   # MLflow's Duration column, always shown, after the training time
    order = [*columns[:at], "duration", *columns[at:]]
    # In name order the runs are a flat list (sorted by creation, the page nests them under the parent, folded), the
    # parent's row after its children's.
    widths = {**{c: SUMMARY_WIDTH for cs in (first, *rest) for c in cs}, **{c: NUMBER_WIDTH for c in runs[:2]}}
    return {**base_state(), "orderByKey": BY_NAME, "orderByAsc": True, "selectedColumns": columns,
            "columnOrder": order, "columnWidths": widths}


def save(client, experiment_id: str, ex: Exercise, drawn: list[tuple[Panel, dict, dict]] | None = None) -> None:
    """The exercise's views, as the experiment tags the UI's saved views and share links read. drawn: each panel as
    its runs draw it, with its lines' ranges and its other metrics (refresh); else the panels as the YAML says."""
    now = int(time.time() * 1000)
    views = [(TABLE_KEY, TABLE_NAME, table_state(ex))]
    views += [(key_of(p), p.name if p.apart else NAME, state(ex, p, spans, others))
              for p, spans, others in drawn or [(p, {}, {}) for p in panels(ex)]]
    for key, name, st in views:
        envelope = {"name": name, "createdAt": now, "updatedAt": now, "state": deflated(json.dumps(st))}
        client.set_experiment_tag(experiment_id, f"{PREFIX}{key}", json.dumps(envelope))


def deflated(text: str) -> str:
    """The UI's own compressed form of a view's state ("deflate;" and the zlib stream in base64; it reads plain JSON
    too): a tag holds at most 20,000 characters, and a view naming 80 metrics takes more."""
    return DEFLATED + base64.b64encode(zlib.compress(text.encode())).decode()


def read_state(tag: str) -> dict:
    """A saved view's state, from its tag."""
    text = json.loads(tag)["state"]
    return json.loads(zlib.decompress(base64.b64decode(text[len(DEFLATED):])) if text.startswith(DEFLATED) else text)


def drawable(panel: Panel, logged: set[str]) -> Panel:
    """The panel as its runs can draw it: a line against a metric no run has (a store from before `position` was
    logged) is drawn over steps instead."""
    charts = tuple(dataclasses.replace(c, x=None) if c.kind == ChartKind.LINE and c.x and c.x not in logged else c
                   for c in panel.charts)
    return dataclasses.replace(panel, charts=charts)


def refresh(client, experiment_id: str, ex: Exercise, runs: list) -> None:
    """The views again, once runs are done: each line's range from the histories, and every other metric the
    panel's runs have, with how many of its variants have it."""
    finished = [r for r in runs if r.info.status == "FINISHED"]
    lesson = reference.series(ex)
    drawn = []
    for panel in panels(ex):
        mine = [r for r in finished if r.data.tags.get("variant") in panel.variants]
        panel = drawable(panel, {k for r in mine for k in r.data.metrics})
        spans = {}
        for c in (c for c in panel.charts if c.kind == ChartKind.LINE):
            histories = [[(p.step, p.value) for p in client.get_metric_history(r.info.run_id, c.metric)]
                         for r in mine if c.metric in r.data.metrics]
            if reference.key(c.metric) in lesson_keys(ex, panel, c):
                histories += [points for (v, m), points in lesson.items() if m == c.metric and v in panel.variants]
            spans[c] = span(histories, after_start=c.metric in CURVES, steps=c.x is None)
        counts: dict[str, set] = {}
        for r in mine:
            for k in r.data.metrics:
                counts.setdefault(k, set()).add(r.data.tags["variant"])
        drawn.append((panel, spans, {k: len(counts[k]) for k in sorted(counts)}))
    save(client, experiment_id, ex, drawn)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def description(ex: Exercise) -> str:
    """The experiment's description, as plain text: MLflow's experiments list shows it unrendered (`**` and all)."""
    claims = " ".join(f"({i}) {_sentence(c.text)}" for i, c in enumerate(ex.claims, 1))
    return " ".join([_sentence(ex.title), _sentence(f"Lesson {ex.lesson}"), _sentence(f"Measures: {ex.measures}"),
                     *([f"Claims: {claims}"] if claims else [])])
