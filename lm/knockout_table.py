"""What a knock-out table holds, without torch (the report reads these tables and never imports it): what is knocked
out (Target, Part), how (Mode), the metric names a run logs, how many windows it is measured on, and each head's
type; lm/knockout.py measures it.
"""
import math
from dataclasses import dataclass
from enum import Enum

import pandas as pd

# The first 512 windows of the fixed validation set: the intact and the knocked-out model read the same
# characters, so the difference is far steadier than either loss; every window costs 2 passes per head.
WINDOWS = 512


class Mode(str, Enum):
    MEAN = "mean"   # the output replaced by its mean over the batches and positions
    ZERO = "zero"   # the output replaced by zeros


class Part(str, Enum):
    HEAD = "head"
    ATTN = "attn"
    MLP = "mlp"


@dataclass(frozen=True)
class Target:
    """What is knocked out; blocks and heads are numbered from 1, as the report numbers them."""
    part: Part
    block: int
    head: int | None = None

    @property
    def key(self) -> str:
        return f"b{self.block}h{self.head}" if self.part is Part.HEAD else f"b{self.block}_{self.part.value}"


def metric(target: Target, mode: Mode) -> str:
    """`knockout_b1h3` for mean ablation, `knockout_zero_b1h3` for zero ablation."""
    return f"knockout_{'zero_' if mode is Mode.ZERO else ''}{target.key}"


# --- what a head is, and what the run logs ---------------------------------------------------------------
# A head's type is its strongest statistic: each of these is a mean weight on the keys its pattern names
# (heads.csv's columns), so they compare on one scale.
TYPES = {"previous": "prev_token_score", "two back": "m2", "itself": "m0", "duplicate": "dup_token_score",
         "induction": "induction_score", "word start": "word_start_score"}


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
