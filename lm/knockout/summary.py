"""A knock-out table (knockout.csv) read as a DataFrame: each head's type, the metrics a run logs, and the table
of one row per head. pandas, no torch: the report reads it too."""
import math

import pandas as pd

from lm.knockout.table import TYPES, Mode, Part


def head_types(heads: pd.DataFrame) -> pd.DataFrame:
    """heads.csv's rows with `type` (the strongest statistic's name) and `type_score` (its value)."""
    columns = {name: col for name, col in TYPES.items() if col in heads}
    scores = heads[list(columns.values())].rename(columns={c: n for n, c in columns.items()}).fillna(-math.inf)
    return heads.assign(type=scores.idxmax(axis=1), type_score=scores.max(axis=1))

def headline(table: pd.DataFrame, heads: pd.DataFrame | None = None) -> dict[str, float]:
    """The metrics a run logs: every target's increase, the largest single head's, the cost, and, given the
    run's head statistics, the heads the lessons' claims name: block 1's previous-character head (the block-1
    head with the highest previous-token score) against the other block-1 heads, and the sharpest head (the
    highest average heaviest weight)."""
    out = dict(zip(table["metric"], table["increase"].astype(float)))
    mean = table[(table["mode"] == Mode.MEAN.value) & (table["part"] == Part.HEAD.value)]
    out["knockout_head_max"] = float(mean["increase"].max())
    out["knockout_seconds"] = float(table.attrs.get("seconds", math.nan))
    if heads is None or heads.empty:
        return out
    effect = mean.set_index(["block", "head"])["increase"].astype(float)
    b1 = heads[heads["block"] == 1]
    if "prev_token_score" in heads and b1["prev_token_score"].notna().any():
        prev = b1.loc[b1["prev_token_score"].idxmax()]
        out["knockout_prev_head_b1"] = float(effect[1, int(prev["head"])])
        others = [effect[1, int(h)] for h in b1["head"] if int(h) != int(prev["head"])]
        if others:
            out["knockout_other_b1_max"] = float(max(others))
    if "max_weight" in heads and heads["max_weight"].notna().any():
        sharp = heads.loc[heads["max_weight"].idxmax()]
        out["knockout_sharpest_head"] = float(effect[int(sharp["block"]), int(sharp["head"])])
    return out

def head_table(table: pd.DataFrame, heads: pd.DataFrame | None) -> pd.DataFrame:
    """One row per head and per whole attention or MLP: type, scores and the increase under each ablation."""
    wide = table.pivot_table(index=["block", "head", "part"], columns="mode", values="increase",
                             dropna=False).reset_index()
    wide = wide.dropna(subset=[m.value for m in Mode if m.value in wide], how="all")
    wide.columns = [f"knockout_{c}" if c in {m.value for m in Mode} else c for c in wide.columns]
    if heads is not None and not heads.empty:
        typed = head_types(heads)
        keep = ["block", "head", "type", "type_score", *(c for c in TYPES.values() if c in typed), "max_weight"]
        wide = wide.merge(typed[[c for c in keep if c in typed]].astype({"head": "Int64"}),
                          on=["block", "head"], how="left")
    order = {Part.HEAD.value: 0, Part.ATTN.value: 1, Part.MLP.value: 2}
    return wide.sort_values(["block", "part", "head"], key=lambda s: s.map(order) if s.name == "part" else s) \
        .reset_index(drop=True)


def intact_loss(table: pd.DataFrame) -> float:
    """The validation loss with nothing knocked out, on the knock-out's windows."""
    return float((table["loss"] - table["increase"]).iloc[0])


def largest_head(table: pd.DataFrame) -> pd.Series:
    """The head whose mean knock-out raises the loss most: its row (block, head, increase)."""
    heads = table[(table["part"] == Part.HEAD.value) & (table["mode"] == Mode.MEAN.value)]
    return heads.loc[heads["increase"].idxmax()]


def terminal_table(table: pd.DataFrame, heads: pd.DataFrame | None) -> str:
    """The head table for the terminal: numbered from 1, increases in nats per character, scores as weights."""
    df = head_table(table, heads)
    df["head"] = [str(h) if p == Part.HEAD.value else f"({p})" for h, p in zip(df["head"], df["part"])]
    names = {"knockout_mean": "knock-out (mean)", "knockout_zero": "knock-out (zero)", "type_score": "score",
             "max_weight": "heaviest", **{col: name for name, col in TYPES.items()}}
    df = df.drop(columns="part").rename(columns=names)
    for col in df.columns[2:]:
        if col != "type":
            signed = col.startswith("knock-out")
            df[col] = [("" if pd.isna(x) else f"{x:+.3f}" if signed else f"{x:.2f}") for x in df[col]]
    return df.fillna("").to_string(index=False)
