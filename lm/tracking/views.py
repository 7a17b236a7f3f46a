"""Two saved views of MLflow's runs page on every exercise: its seeds charted by variant, and its runs in a table.

MLflow 3's runs page keeps its state (grouping, charts, columns) in the browser, and saves a named copy of it as
an experiment tag `mlflow.sharedViewState.<key>` holding {name, createdAt, updatedAt, state}, where state is
the page's state as JSON. Such a view is listed in the page's "Saved views" menu, and
`#/experiments/<id>/runs?viewStateShareKey=<key>` opens it.

The charts view shows the child runs (not the parent) grouped by the `variant` tag, each group the mean of its seeds
with their min-max band in the line charts, and leads with the exercise's own comparison, from its YAML's `ui:`
block (else its validation curve and the final values its claims read): `lines`, curves over steps (the validation
loss from the first validation after step 0, where the variants part, on the y range their curves span there), then
`bars`, each variant's final value (the mean over its seeds; their spread is the table's). MLflow adds a chart of
its own for every metric no chart names, sorted by name, before or among ours: the suite, once the runs are done,
names every other metric in one last section, folded, so that the page opens on the exercise's charts.

The table view shows the runs, the parent first with each variant's mean ± std and seed count of the charted
final values (lm/tracking/aggregates.py), and beside each run its corpus, validation loss, training time and seed.
"""
import base64
import json
import time
import zlib

from lm.spec.exercises import Exercise
from lm.tracking import aggregates

PREFIX = "mlflow.sharedViewState."
KEY = "tinygpt-seeds-by-variant"
NAME = "Seeds by variant"
TABLE_KEY = "tinygpt-runs-and-means"
TABLE_NAME = "Runs and means"
OTHERS = "Every other metric"
# MLflow 3's UI opens on its GenAI pages unless the URL says otherwise: its sidebar switch (GenAI / Model training)
# is kept in the browser, defaults to GenAI, and decides what an experiment opens on (3.17 reads the switch, not
# the mlflow.experimentKind tag). workflowType=machine_learning in the URL sets it for the page, in any browser.
RUNS = "runs?workflowType=machine_learning"
# The charts view's runs: the children, named <variant>/seed<n>; the parent carries no metric to chart. In name
# order: sorted by creation (the default), the page fetches each child's parent too, which has no variant and would
# be charted as a group of its own, "Unassigned".
SEEDS_ONLY = "attributes.run_name LIKE '%/seed%'"
BY_NAME = "tags.`mlflow.runName`"
TRAINING_TIME = "train_time_s"
DEFLATED = "deflate;"
SUMMARY_WIDTH = 190  # pixels
CURVES = ("val_loss", "val_perplexity", "train_loss")  # over training steps: their charts start after step 0


def has_view(exp, key: str = KEY) -> bool:
    return f"{PREFIX}{key}" in exp.tags


def link(base: str, exp, key: str = KEY) -> str:
    """The experiment's runs page, opened on one of its saved views."""
    mode = "&compareRunsMode=CHART" if key == KEY else ""
    return f"{base}/#/experiments/{exp.experiment_id}/{RUNS}{mode}&viewStateShareKey={key}"


def charted(ex: Exercise) -> dict[str, list[str]]:
    """The exercise's charts: its `ui:` block, else the validation curve (unless it trains nothing) and, as final
    values, what its claims read."""
    ui = ex.ui or {}
    lines = ui.get("lines", [] if ex.init_from else ["val_loss"])
    bars = ui.get("bars", [k for k in aggregates.headline(ex) if k != "val_perplexity"])
    return {"lines": lines, "bars": bars}


def _chart(kind: str, metric: str, section: str, **extra) -> dict:
    return {"uuid": f"tinygpt-{kind.lower()}-{metric}", "type": kind, "runsCountToCompare": 100,
            "metricSectionId": section, "deleted": False, "isGenerated": False, "displayName": metric,
            "metricKey": metric, "selectedMetricKeys": [metric], **extra}


def _line(metric: str, section: str, span: dict) -> dict:
    return _chart("LINE", metric, section, lineSmoothness=0, xAxisScaleType="linear", scaleType="linear",
                  range=span, xAxisKey="step", selectedXAxisMetricKey="", yAxisKey="metric", yAxisExpressions=[],
                  ignoreOutliers=False, useGlobalXaxisKey=False, useGlobalLineSmoothing=True)


def span(histories: list[list[tuple[int, float]]]) -> dict:
    """A curve chart's range: from the first step after 0 that has a value, over the values from there, 5% padded.
    Step 0 is the untrained model, at a loss far above every later one: on its scale the variants coincide."""
    first = min((s for h in histories for s, _ in h if s > 0), default=None)
    if first is None:
        return {}
    values = [v for h in histories for s, v in h if s >= first]
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or abs(high) * 0.05 or 0.05
    last = max(s for h in histories for s, _ in h)
    return {"xMin": first, "xMax": last, "yMin": low - pad, "yMax": high + pad}


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


def state(ex: Exercise, spans: dict[str, dict] | None = None, others: list[str] = ()) -> dict:
    """The charts view: the exercise's charts (spans: each curve's range), then `others`, every other metric the
    runs have, in a folded section of their own."""
    section, rest = "tinygpt-seeds-by-variant", "tinygpt-every-other-metric"
    kinds = charted(ex)
    charts = [*(_line(m, section, (spans or {}).get(m, {})) for m in kinds["lines"]),
              *(_chart("BAR", m, section) for m in kinds["bars"])]
    named = {c["metricKey"] for c in charts}
    charts += [_chart("BAR", m, rest) for m in others if m not in named]
    sections = [{"uuid": section, "name": NAME, "display": True, "isReordered": True, "deleted": False,
                 "isGenerated": False},
                {"uuid": rest, "name": OTHERS, "display": False, "isReordered": True, "deleted": False,
                 "isGenerated": False}]
    return {**base_state(), "searchFilter": SEEDS_ONLY, "orderByKey": BY_NAME, "orderByAsc": True,
            # every variant's runs as one line: the seeds' mean, with the band from their min to their max
            "groupBy": {"aggregateFunction": "average", "groupByKeys": [{"mode": "tag", "groupByData": "variant"}]},
            "compareRunSections": sections, "compareRunCharts": charts}


def table_state(ex: Exercise) -> dict:
    """The runs table: the parent's per-variant summaries of the charted final values, and each run's corpus,
    validation loss, training time and seed."""
    summaries = [f"tags.`{aggregates.prefix(v)}/{m}`" for m in charted(ex)["bars"] for v in ex.variants]
    columns = ["metrics.`val_loss`", f"metrics.`{TRAINING_TIME}`", "tags.`seed`", *summaries, "attributes.`Dataset`"]
    order = [*columns[:2], "duration", *columns[2:]]   # MLflow's Duration column, always shown, by the training time
    # In name order the runs are a flat list (sorted by creation, the page nests them under the parent, folded), the
    # parent's row after its children's; wide enough for "2.962 ± 0.012 (3 seeds)" and "h1/knockout_head_max".
    return {**base_state(), "orderByKey": BY_NAME, "orderByAsc": True, "selectedColumns": columns,
            "columnOrder": order, "columnWidths": {c: SUMMARY_WIDTH for c in summaries}}


def save(client, experiment_id: str, ex: Exercise, spans: dict[str, dict] | None = None,
         others: list[str] = ()) -> None:
    """The exercise's two views, as the experiment tags the UI's saved views and share links read."""
    now = int(time.time() * 1000)
    for key, name, st in ((TABLE_KEY, TABLE_NAME, table_state(ex)), (KEY, NAME, state(ex, spans, others))):
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


def refresh(client, experiment_id: str, ex: Exercise, runs: list) -> None:
    """The views again, once runs are done: each curve's range from their histories, and every other metric of the
    experiment's runs (the parent's too: in stores from before lm/tracking/aggregates.py logged tags it has some)."""
    finished = [r for r in runs if r.info.status == "FINISHED"]
    spans = {m: span([[(p.step, p.value) for p in client.get_metric_history(r.info.run_id, m)]
                      for r in finished if m in r.data.metrics])
             for m in charted(ex)["lines"] if m in CURVES}
    others = sorted({k for r in runs for k in r.data.metrics})
    save(client, experiment_id, ex, spans, others)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def description(ex: Exercise) -> str:
    """The experiment's description, as plain text: MLflow's experiments list shows it unrendered (`**` and all)."""
    claims = " ".join(f"({i}) {_sentence(c.text)}" for i, c in enumerate(ex.claims, 1))
    return " ".join([_sentence(ex.title), _sentence(f"Lesson {ex.lesson}"), _sentence(f"Measures: {ex.measures}"),
                     *([f"Claims: {claims}"] if claims else [])])
