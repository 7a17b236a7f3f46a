"""The verdict engine: numbers in, verdicts out. Every claim of every exercise judged once per table, the family's
p adjusted together; no MLflow, no figures, no report (pyproject.toml's import contracts hold it so).

    claims_table.py  the table: every claim judged at every look it reached, the family adjusted by Holm
    claim_kinds.py   the claim kinds' registry: how each kind of claim is judged (judge)
    claims.py        a claim's comparisons: their intervals, p and verdicts, and a claim's verdict from them
    decision.py      the decision rule: the outcomes, the level, the family, the looks and how the level is spent
    stats.py         numbers over seeds: mean ± std, t-intervals of a difference, the seeds a difference needs
    results.py       what the engine reads of an exercise (ExerciseResults), and those results as plain numbers

`table(results)` is what the report, `make decide` and the notebook API build, each from the store's runs
(analysis.store_reading); from `Numbers` a table is built without a store:

    from analysis.verdicts import Numbers, table
    from lm.spec.exercises import load_all

    recipe = load_all()["recipe002"]
    seeds = {1: 1.745, 2: 1.748, 3: 1.751}
    t = table({"recipe002": Numbers(recipe, final={}, curves={"cpu": {"val_loss": {2500: seeds}}})})
    t.frame()       # a row per claim: the lesson's 1.746 reproduced, the claims whose numbers are missing not run
"""
from analysis.verdicts.claims_table import COLUMNS, Row, Table, table
from analysis.verdicts.results import ExerciseResults, Numbers

__all__ = ["COLUMNS", "ExerciseResults", "Numbers", "Row", "Table", "table"]
