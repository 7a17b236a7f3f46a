"""The verdict engine: numbers in, verdicts out. Every claim of every exercise judged once per table, the family's
p adjusted together; no MLflow, no figures, no report (pyproject.toml's import contracts hold it so).

    claims_table.py  the table: every claim judged at every look it reached, each family adjusted together
                     (Benjamini and Hochberg's step-up, the family counted from the exercise files), each metric's
                     seed variance pooled over every variant of the store (variance.py)
    claim_kinds.py   the claim kinds' registry: each kind whole (how it is judged, its family, what it asks, where
                     the calibration sets it, what it marks)
    variance.py      the seeds' variance shared across the variants that measure a metric: an empirical-Bayes prior
    bounds.py        where each metric can lie, and an expression of metrics: the range an interval is cut to
    claims.py        a claim's comparisons: their tests, p and verdicts, and a claim's verdict from them
    decision.py      the decision rule: the outcomes, the level, the family, the looks and how the level is spent
    stats.py         numbers over seeds: mean ± std, the tests of a difference
    results.py       what the engine reads of an exercise (ExerciseResults), and those results as plain numbers

Its error rate is measured through `table` by analysis/calibration (`make calibrate`).

`table(results, family, judged)` is what the report, `make decide` and the notebook API build, each from the
store's runs (analysis.store_reading): the judged exercises' and those their claims read (read_from), the family
counted over every exercise file; from `Numbers` a table is built without a store:

    from analysis.verdicts import Numbers, table
    from lm.settings.exercises import load_all

    recipe = load_all()["recipe002"]
    seeds = {1: 1.7455, 2: 1.7460, 3: 1.7466}
    t = table({"recipe002": Numbers(recipe, final={}, curves={"cpu": {"val_loss": {2500: seeds}}})})
    [r.verdict.verdict for r in t.rows]   # the lesson's 1.746 reproduced, the claims whose numbers are missing not run

What a verdict says in words (its interval, label and notes, the table as a frame) is the report's
(analysis/report/verdict_text.py); the seeds an open claim needs, analysis/planning.py's.
"""
from analysis.verdicts.claims_table import Row, Table, read_from, table
from analysis.verdicts.results import ExerciseResults, Numbers

__all__ = ["ExerciseResults", "Numbers", "Row", "Table", "read_from", "table"]
