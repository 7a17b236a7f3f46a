"""A saved view of MLflow's runs page on every exercise: its child runs grouped by variant, seeds aggregated.

MLflow 3's runs page keeps its state (grouping, charts, columns) in the browser, and saves a named copy of it as
an experiment tag `mlflow.sharedViewState.<key>` holding {name, createdAt, updatedAt, state}, where state is
the page's state as JSON. Such a view is listed in the page's "Saved views" menu, and
`#/experiments/<id>/runs?viewStateShareKey=<key>` opens it. The suite writes one per exercise: runs grouped by
the `variant` tag, each group the mean of its seeds with their min-max band in the line charts, and charts of
the validation loss and of parameters against validation loss (parallel coordinates).
"""
import json
import time

from lm.exercises import Exercise

PREFIX = "mlflow.sharedViewState."
KEY = "tinygpt-seeds-by-variant"
NAME = "Seeds by variant"


def has_view(exp) -> bool:
    return f"{PREFIX}{KEY}" in exp.tags


def link(base: str, exp) -> str:
    return (f"{base}/#/experiments/{exp.experiment_id}/runs?workflowType=machine_learning&compareRunsMode=CHART"
            f"&viewStateShareKey={KEY}")


def _line(uuid: str, metric: str, section: str) -> dict:
    return {"uuid": uuid, "type": "LINE", "runsCountToCompare": 100, "metricSectionId": section, "deleted": False,
            "isGenerated": False, "displayName": f"{metric} (mean of the seeds, band: min to max)",
            "metricKey": metric, "selectedMetricKeys": [metric], "lineSmoothness": 0, "xAxisScaleType": "linear",
            "scaleType": "linear", "range": {}, "xAxisKey": "step", "selectedXAxisMetricKey": "", "yAxisKey": "metric",
            "yAxisExpressions": [], "ignoreOutliers": False, "useGlobalXaxisKey": True, "useGlobalLineSmoothing": True}


def varied(ex: Exercise) -> list[str]:
    """The config keys the exercise's variants change (model.n_head, …): each is a logged param."""
    return sorted({o.lstrip("+~").split("=")[0] for overrides in ex.variants.values() for o in overrides})


def state(ex: Exercise) -> dict:
    """The runs page's state: the keys and values its own "Save as new view" writes (MLflow 3.17)."""
    section = "tinygpt-seeds-by-variant"
    parallel = {"uuid": "tinygpt-parallel", "type": "PARALLEL", "runsCountToCompare": 100, "metricSectionId": section,
                "deleted": False, "isGenerated": False, "displayName": "Parameters against validation loss",
                "selectedParams": varied(ex), "selectedMetrics": ["n_params", "val_loss"], "showAllRuns": False}
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
                             *([parallel] if varied(ex) else [])],
    }


def save(client, experiment_id: str, ex: Exercise) -> None:
    """The exercise's view, as the experiment tag the UI's saved views and share links read (plain JSON: the UI
    reads its own deflated form or this)."""
    now = int(time.time() * 1000)
    envelope = {"name": NAME, "createdAt": now, "updatedAt": now, "state": json.dumps(state(ex))}
    client.set_experiment_tag(experiment_id, f"{PREFIX}{KEY}", json.dumps(envelope))
