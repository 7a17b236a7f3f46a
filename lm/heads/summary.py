"""The head-statistics table (heads.csv) read as a DataFrame: the aggregates a run logs as its heads_* metrics,
and the strongest head of a statistic. pandas and numpy, no torch: the report reads it too."""
import math

import numpy as np
import pandas as pd

from lm.heads.table import STATISTICS


def headline(table: pd.DataFrame) -> dict[str, float]:
    """The statistics' aggregates as MLflow metrics, each over every head and, where the entry says so, over each
    block's heads alone; a column that is missing or all NaN is left out."""
    out = {}
    # numpy on each column's values, NaN left out as pandas leaves it out: the same values to the bit as pandas's
    # own groupby and agg, at a fraction of their time on a report's many tables.
    blocks = table["block"].to_numpy()
    for s in STATISTICS:
        if s.name not in table:
            continue
        column = table[s.name].to_numpy(dtype=float)
        groups = [(None, column)]
        if s.per_block:
            groups += [(int(b), column[blocks == b]) for b in np.unique(blocks)]
        for how in s.aggregate:
            for block, values in groups:
                values = values[~np.isnan(values)]
                value = float(getattr(np, how)(values)) if len(values) else math.nan
                if math.isfinite(value):
                    out[s.metric_name(how, block)] = value
    return out

def strongest(table: pd.DataFrame, column: str) -> tuple[int, int]:
    """(block, head) of the row with the largest value in column."""
    row = table.loc[table[column].idxmax()]
    return int(row["block"]), int(row["head"])
