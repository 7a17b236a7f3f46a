"""An exercise's result on its parent run: per variant, the mean, spread and seed count of its headline metrics.

The parent run of an exercise gets, for each variant with a finished child run, `<variant>/<metric>_mean`,
`<variant>/<metric>_std` (with two seeds or more; sample standard deviation, as the report's mean ± std) and
`<variant>/seeds`, so the runs table and its charts show them without opening the children. The headline metrics
are the validation loss and perplexity and every metric the exercise's claims read. The suite refreshes them
whenever it ends, so a seed that finishes later shows in them.
"""
import re

import numpy as np

from lm.spec.exercises import Exercise, terms, tree

HEADLINE = ("val_loss", "val_perplexity")
# MLflow's metric names take letters, digits, _ - . space : and / only; a sweep's variants are named like
# `n_head=2,n_layer=4`, which goes in as `n_head:2 n_layer:4`.
NAME = {"=": ":", ",": " "}


def prefix(variant: str) -> str:
    return re.sub(r"[^\w\-. :/]", lambda m: NAME.get(m[0], "_"), variant)


def headline(ex: Exercise) -> list[str]:
    """val_loss, val_perplexity, then what the claims' checks, values and answers name (`h4.val_loss`)."""
    keys = dict.fromkeys(HEADLINE)
    for c in ex.claims:
        for expr in filter(None, (c.check, c.ours)):
            for variant, key, _ in terms(tree(expr)):
                if variant in ex.variants:   # not another exercise's (`baseline:base.key`)
                    keys[key] = None
        if c.answer:
            keys[c.answer] = None
    return list(keys)


def summarise(runs, keys: list[str]) -> dict[str, float]:
    """The metrics for the parent, from the finished child runs (mlflow Run objects), one per (variant, seed)."""
    newest = {}
    for r in sorted(runs, key=lambda r: r.info.start_time or 0):
        tags = r.data.tags
        if r.info.status == "FINISHED" and "variant" in tags:
            newest[tags["variant"], tags.get("seed")] = r
    by_variant: dict[str, list] = {}
    for (variant, _), r in newest.items():
        by_variant.setdefault(variant, []).append(r)
    out = {}
    for variant, rs in by_variant.items():
        variant = prefix(variant)
        out[f"{variant}/seeds"] = len(rs)
        for key in keys:
            values = np.array([r.data.metrics[key] for r in rs if key in r.data.metrics], dtype=float)
            if len(values):
                out[f"{variant}/{key}_mean"] = float(values.mean())
            if len(values) > 1:
                out[f"{variant}/{key}_std"] = float(values.std(ddof=1))
    return out


def refresh(store, parent_id: str, ex: Exercise) -> dict[str, float]:
    """Recomputes and logs the parent run's per-variant metrics; returns them."""
    exp_id = store.client.get_run(parent_id).info.experiment_id
    children = store.client.search_runs([exp_id], f"tags.mlflow.parentRunId = '{parent_id}'", max_results=10000)
    metrics = summarise(children, headline(ex))
    store.log_metrics(parent_id, metrics)
    for child in children[:1]:  # the corpus, in the Dataset column of the exercise's own row
        store.client.log_inputs(parent_id, datasets=child.inputs.dataset_inputs)
    return metrics
