"""A saved view of MLflow's runs page on every exercise: its child runs grouped by variant, seeds aggregated.

MLflow 3's runs page keeps its state (grouping, charts, columns) in the browser, and saves a named copy of it as
an experiment tag `mlflow.sharedViewState.<key>` holding {name, createdAt, updatedAt, state}, where state is
the page's state as JSON. Such a view is listed in the page's "Saved views" menu, and
`#/experiments/<id>/runs?viewStateShareKey=<key>` opens it. The suite writes one per exercise: runs grouped by
the `variant` tag, each group the mean of its seeds with their min-max band in the line charts, and charts of
the validation and training loss, and parallel coordinates of parameter count against validation loss.
"""
import json
import time

from lm.tracking import aggregates

PREFIX = "mlflow.sharedViewState."
KEY = "tinygpt-seeds-by-variant"
NAME = "Seeds by variant"
TABLE_KEY = "tinygpt-runs-and-means"
TABLE_NAME = "Runs and means"
# MLflow 3's UI opens on its GenAI pages unless the URL says otherwise: its sidebar switch (GenAI / Model training)
# is kept in the browser, defaults to GenAI, and decides what an experiment opens on (3.17 reads the switch, not
# the mlflow.experimentKind tag). workflowType=machine_learning in the URL sets it for the page, in any browser.
RUNS = "runs?workflowType=machine_learning"


def has_view(exp, key: str = KEY) -> bool:
    return f"{PREFIX}{key}" in exp.tags


def link(base: str, exp, key: str = KEY) -> str:
    """The experiment's runs page, opened on one of its saved views."""
    mode = "&compareRunsMode=CHART" if key == KEY else ""
    return f"{base}/#/experiments/{exp.experiment_id}/{RUNS}{mode}&viewStateShareKey={key}"


def _line(uuid: str, metric: str, section: str) -> dict:
    return {"uuid": uuid, "type": "LINE", "runsCountToCompare": 100, "metricSectionId": section, "deleted": False,
            "isGenerated": False, "displayName": metric,
            "metricKey": metric, "selectedMetricKeys": [metric], "lineSmoothness": 0, "xAxisScaleType": "linear",
            "scaleType": "linear", "range": {}, "xAxisKey": "step", "selectedXAxisMetricKey": "", "yAxisKey": "metric",
            "yAxisExpressions": [], "ignoreOutliers": False, "useGlobalXaxisKey": True, "useGlobalLineSmoothing": True}


def table_state(variants: list[str]) -> dict:
    """The runs table with the parent run's per-variant means (lm/tracking/aggregates.py) and the Dataset as columns."""
    means = [f"metrics.`{aggregates.prefix(v)}/val_loss_mean`" for v in variants]
    return {**state(), "groupBy": None, "compareRunCharts": None, "compareRunSections": None,
            "selectedColumns": ["attributes.`Dataset`", "metrics.`val_loss`", *means, "tags.`seed`"]}


def state() -> dict:
    """The runs page's state: the keys and values its own "Save as new view" writes (MLflow 3.17)."""
    section = "tinygpt-seeds-by-variant"
    parallel = {"uuid": "tinygpt-parallel", "type": "PARALLEL", "runsCountToCompare": 100, "metricSectionId": section,
                "deleted": False, "isGenerated": False, "displayName": "Parameter count against validation loss",
                # metrics only: the chart cannot aggregate a group's params, which MLflow keeps as strings
                "selectedParams": [], "selectedMetrics": ["n_params", "val_loss"], "showAllRuns": False}
    return {
        "searchFilter": "", "orderByKey": "attributes.start_time", "orderByAsc": False, "startTime": "ALL",
        "lifecycleFilter": "Active", "datasetsFilter": [], "modelVersionFilter": "All Runs",
        "selectedColumns": ["attributes.`Dataset`", "metrics.`val_loss`", "tags.`seed`"],
        "columnOrder": [], "columnWidths": {}, "runsHiddenMode": "SHOW_ALL", "viewMaximized": False,
        "runListHidden": False, "isAccordionReordered": False, "hideEmptyCharts": True,
        # every variant's runs as one line: the seeds' mean, with the band from their min to their max
        "groupBy": {"aggregateFunction": "average", "groupByKeys": [{"mode": "tag", "groupByData": "variant"}]},
        "useGroupedValuesInCharts": True, "groupsExpanded": {},
        "globalLineChartConfig": {"xAxisKey": "step", "lineSmoothness": 0, "selectedXAxisMetricKey": ""},
        "compareRunSections": [{"uuid": section, "name": NAME, "display": True, "isReordered": False,
                                "deleted": False, "isGenerated": False}],
        "compareRunCharts": [_line("tinygpt-val-loss", "val_loss", section),
                             _line("tinygpt-train-loss", "train_loss", section),
                             parallel],
    }


def save(client, experiment_id: str, variants: list[str]) -> None:
    """The exercise's two views, as the experiment tags the UI's saved views and share links read (plain JSON:
    the UI reads its own deflated form or this)."""
    now = int(time.time() * 1000)
    for key, name, st in ((TABLE_KEY, TABLE_NAME, table_state(variants)), (KEY, NAME, state())):
        envelope = {"name": name, "createdAt": now, "updatedAt": now, "state": json.dumps(st)}
        client.set_experiment_tag(experiment_id, f"{PREFIX}{key}", json.dumps(envelope))
