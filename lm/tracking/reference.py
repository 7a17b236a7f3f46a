"""The lessons' own curves, charted beside ours: each lesson number an exercise's claims judge at a step of a
variant (`value: 2.090` on `base.val_loss[500]`) is a point of a series `lesson_<metric>` on that variant's runs.

The numbers are the claims' own, read from the exercise's YAML, never typed again. They ride on each seed's run of
the variant, named as the lesson's, so that MLflow's runs page draws them as one more line of the variant's group,
"base (lesson_val_loss)" beside "base (val_loss)": on the exercise's parent run (a run of no variant) they would be a
group of their own, and MLflow lists every group with every metric of a chart in its legend, with or without
points. A copied run does not copy them (lm/tracking/store.py: the exercise that copies charts its own), and the
report, which reads the metrics the claims name, never meets them.
"""
import time

from lm.settings.exercises import Exercise, terms, tree

PREFIX = "lesson_"


def key(metric: str) -> str:
    return f"{PREFIX}{metric}"


def series(ex: Exercise) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """{(variant, metric): [(step, the lesson's value), ...]} from the claims that judge one lesson number at a step
    of one of the exercise's variants, in step order."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for c in ex.claims:
        if c.value is None or not c.ours:
            continue
        named = list(terms(tree(c.ours)))
        if len(named) == 1 and named[0][2] is not None and named[0][0] in ex.variants:
            variant, metric, step = named[0]
            out.setdefault((variant, metric), {})[step] = float(c.value)
    return {k: sorted(points.items()) for k, points in out.items()}


def metrics(ex: Exercise) -> set[str]:
    """The metrics the lessons give a series of."""
    return {m for _, m in series(ex)}


def log(client, runs: list, ex: Exercise) -> None:
    """The exercise's lesson series on each finished run of their variants (mlflow Run objects), on a run that has
    none yet."""
    from mlflow.entities import Metric  # MLflow, 3 s: the views, which read series(), are built without it

    now = int(time.time() * 1000)
    for (variant, metric), values in series(ex).items():
        for r in runs:
            if r.data.tags.get("variant") == variant and key(metric) not in r.data.metrics:
                client.log_batch(r.info.run_id, metrics=[Metric(key(metric), v, now, step) for step, v in values])
