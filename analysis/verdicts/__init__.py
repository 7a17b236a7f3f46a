"""The verdict engine: numbers in, verdicts out. Every claim of every exercise judged once per table, the family's
p adjusted together; no MLflow, no figures, no report (pyproject.toml's import contracts hold it so).

    claims_table.py  the table: every claim judged at every look it reached, the family adjusted by Holm
    claims.py        one claim's comparisons: their intervals, p and verdicts, and a claim's verdict from them
    decision.py      the decision rule: the outcomes, the level, the family, the looks and how the level is spent
    stats.py         numbers over seeds: mean ± std, t-intervals of a difference, the seeds a difference needs

`from analysis.verdicts import table`: what the report, `make decide` and the notebook API build.
"""
from analysis.verdicts.claims_table import COLUMNS, Row, Table, table

__all__ = ["COLUMNS", "Row", "Table", "table"]
