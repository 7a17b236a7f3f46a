"""The report's knock-out section: which heads matter, beside what they look at, averaged over seeds.

Head order is arbitrary: seed 2's head 3 need not do what seed 1's head 3 does. So heads are matched across seeds
by type (their strongest statistic, lm.knockout.table.TYPES) within a block; two heads of one type in a block are
told apart by rank (the higher score first). Each matched head's loss increase is the mean over the seeds that have it,
with a 95% t-interval. What the lessons imply about the knock-outs are claims in experiments/*.yaml, judged in the
report's verdict table and shown with the exercise's other claims: this judges nothing itself. Each exercise's
knock-out sits in its own section (`exercise`), the method once after the exercises (`method`).
"""
import math

import numpy as np
import pandas as pd

from analysis.report import numbers
from analysis.report.document import Doc, figure_file
from analysis.report.painter import plot
from analysis.store_reading.reader import ExerciseRuns
from analysis.verdicts import stats
from lm.knockout.summary import head_types
from lm.knockout.table import WINDOWS, Mode, Part

TITLE = "Which heads matter: knock-out"
REFERENCES = {Part.ATTN.value: "whole attention", Part.MLP.value: "MLP"}


def t_interval(values) -> tuple[float | None, float | None]:
    """The 95% t-interval of the mean over seeds (stats.summary's); (None, None) for one seed."""
    s = stats.summary(values)
    return (None, None) if s["n"] < 2 else (s["low"], s["high"])


def mean_interval(values, digits: int = 3) -> str:
    """'+0.412 (+0.380 to +0.444)': the mean and its 95% t-interval over seeds; the mean alone for one seed."""
    v = [float(x) for x in values if x is not None and math.isfinite(float(x))]
    if not v:
        return "-"
    low, high = t_interval(v)
    text = f"{np.mean(v):+.{digits}f}"
    return text if low is None else f"{text} ({low:+.{digits}f} to {high:+.{digits}f})"


def matched(er: ExerciseRuns, variant: str, heads: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per run and target: seed, block, head, part, slot (the matched name: type and rank), type score,
    and the increase under mean and zero ablation. heads: each run's heads.csv table, by run id; a run without one
    names its heads by index."""
    knocked, typed = [], []
    for run in er.rows(variant)[["run_id", "seed"]].itertuples():   # every column's tuple would cost 20 ms
        path = er.reader.artifact(run.run_id, "knockout.csv")
        if not path:
            continue
        knocked.append(pd.read_csv(path).assign(seed=run.seed))
        if run.run_id in heads:
            typed.append(head_types(heads[run.run_id])[["block", "head", "type", "type_score"]].assign(seed=run.seed))
    if not knocked:
        return pd.DataFrame()
    # Every run at once: pandas costs milliseconds a call, whatever the rows (under cProfile 0.82 s a report, against
    # 1.14 s run by run).
    wide = (pd.concat(knocked, ignore_index=True).set_index(["seed", "block", "head", "part", "mode"])["increase"]
            .unstack("mode").reset_index().dropna(subset=[Mode.MEAN.value]))
    heads_only = wide[wide["part"] == Part.HEAD.value]
    if typed:
        heads_only = heads_only.merge(pd.concat(typed), on=["seed", "block", "head"], how="left")
    else:
        heads_only = heads_only.assign(type=None, type_score=np.nan)
    by_index = heads_only["type"].isna()
    heads_only.loc[by_index, "type"] = "head " + heads_only.loc[by_index, "head"].astype(int).astype(str)
    heads_only = heads_only.sort_values("type_score", ascending=False, kind="stable")
    rank = heads_only.groupby(["seed", "block", "type"]).cumcount() + 1
    heads_only["slot"] = heads_only["type"] + np.where(rank > 1, " #" + rank.astype(str), "")
    refs = wide[wide["part"] != Part.HEAD.value].assign(slot=lambda d: d["part"].map(REFERENCES))
    return pd.concat([heads_only, refs], ignore_index=True)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per (block, slot): seeds, heads (their index in each seed), type score, and the increases over seeds."""
    rows = []
    for (block, slot, part), g in df.groupby(["block", "slot", "part"], sort=False):
        g = g.sort_values("seed")
        rows.append({"block": int(block), "part": part, "head (matched by type)": slot,
                     "heads, per seed": ", ".join("-" if pd.isna(h) else str(int(h)) for h in g["head"]),
                     "seeds": len(g), "type score": numbers.mean_std(g["type_score"], 2) if part == "head" else "-",
                     "knock-out, mean ablation (95% CI)": mean_interval(g[Mode.MEAN.value]),
                     "zero ablation": mean_interval(g[Mode.ZERO.value]) if Mode.ZERO.value in g else "-",
                     "_effect": g[Mode.MEAN.value].mean()})
    out = pd.DataFrame(rows)
    order = {"head": 0, "attn": 1, "mlp": 2}
    return out.assign(_p=out["part"].map(order)).sort_values(["block", "_p", "_effect"], ascending=[True, True, False])


def exercise(doc: Doc, er: ExerciseRuns, heads: dict[str, pd.DataFrame]) -> bool:
    """The exercise's knock-out, inside its section: the heatmap and, folded, the numbers; heads: each run's
    heads.csv table, by run id. Whether it had any to show."""
    if er.exercise.init_from:
        return False  # the same models as the exercise it samples
    er.reader.prefetch(artifacts=[(r, "knockout.csv") for r in er.finished["run_id"]])
    tables = {}
    for v in er.variants:
        df = matched(er, v, heads)
        if len(df):
            tables[v] = summary(df)
    if not tables:
        return False
    name = er.exercise.name
    doc.h(3, f"{TITLE} ({name})", anchor=f"knockout-{figure_file(name)}")
    doc.figure(f"{name}_knockout", plot("knockout", tables, f"{er.exercise.title}: loss increase per head"),
               "Increase in validation loss when each head is replaced by its mean, mean over seeds; each "
               "panel is a variant, each row a block, each cell a head type matched across seeds (labelled with its "
               f"type and rank), so a block can have more cells than heads. How it is measured: [{TITLE}](#{ANCHOR}).")
    doc.table(pd.concat([t.assign(variant=v) for v, t in tables.items()], ignore_index=True)
              [["variant", "block", "head (matched by type)", "heads, per seed", "seeds", "type score",
                "knock-out, mean ablation (95% CI)", "zero ablation"]],
              fold="The knock-outs' numbers: each matched head's loss increase over seeds, with its 95% interval")
    return True


ANCHOR = "knockout"


def method(doc: Doc, runs: dict[str, ExerciseRuns], shown: list[str]) -> None:
    """How the knock-out is measured, once, after the exercises; shown: the exercises whose sections hold one."""
    doc.h(2, TITLE, anchor=ANCHOR)
    doc.p(f"Each head is knocked out alone, on the first {WINDOWS} windows of the fixed validation set: its output "
          f"(its slice of the input to the attention's output projection) is replaced by its mean over those windows "
          f"and positions (mean ablation), or by zero. The number is the increase in validation loss, in nats per "
          f"character; each block's whole attention and MLP are knocked out too, for scale. Heads are matched across "
          f"seeds by type, their strongest statistic (previous, two back, itself, duplicate, induction, word start), "
          f"ranked within a block when a type repeats (#2); the interval is a 95% t-interval over the seeds that "
          f"have the head. A heatmap's cells are these matched heads, not head indices: where the seeds' heads differ "
          f"in type, a block shows more cells than it has heads. `make heads RUN=<run id>` prints one run's table, by "
          f"head index. The claims that read a knock-out are judged in their exercises' claims tables.")
    if not shown:
        doc.p("Not run: no finished run in this store has a knockout.csv (runs from before knock-out was logged "
              "get one with `make heads EXERCISE=<exercise>`).")
        return
    doc.p("Each exercise's knock-out is in its section: " + ", ".join(
        f"[{name}](#knockout-{figure_file(name)})" for name in shown) + ".")
    how = nopos_how(runs)
    if how:
        doc.p(f"How the model without positions relies on its heads: {how}")


def nopos_how(runs) -> str:
    """How the model without positions relies on its heads, in numbers: the largest head, its share of all the
    heads' effects, and the attention against the MLPs."""
    parts = []
    er = runs.get("nopos")
    for v in ("pos", "nopos"):
        if er is None or v not in er.variants:
            continue
        rows = er.rows(v)
        head_cols = [c for c in rows if c.startswith("metrics.knockout_b") and "h" in c.split("_b")[1]]
        heads = rows[head_cols].astype(float)
        attn = rows[[c for c in rows if c.startswith("metrics.knockout_b") and c.endswith("_attn")]].astype(float)
        mlp = rows[[c for c in rows if c.startswith("metrics.knockout_b") and c.endswith("_mlp")]].astype(float)
        share = (heads.max(axis=1) / heads.clip(lower=0).sum(axis=1)).mean()
        parts.append(f"{v}: largest head {heads.max(axis=1).mean():+.3f} ({share:.0%} of the heads' summed "
                     f"effects), attention {attn.sum(axis=1).mean():+.3f}, MLPs {mlp.sum(axis=1).mean():+.3f}")
    return "; ".join(parts) + "." if parts else ""
