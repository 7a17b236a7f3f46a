"""The A/A check: whether the seeds' spread of two identical variants fits the assumption the claims table's
intervals rest on (normal per-seed values, tests/analysis/test_calibration.py), by Shapiro-Wilk."""
import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from analysis.report.kinds import Context
from analysis.verdicts import decision, stats


def render(ctx: Context, metric: str = "val_loss"):
    er, doc = ctx.er, ctx.doc
    rows, deviations = [], []
    for v in er.variants:
        per = er.per_seed(v, metric) or {}
        x = np.array([per[s] for s in sorted(per)], float)
        deviations += list(x - x.mean()) if len(x) else []
        rows.append({"variant": v, "seeds": ", ".join(map(str, sorted(per))), metric: stats.mean_std(x, 4),
                     "Shapiro-Wilk p": _shapiro(x)})
    pooled = np.array(deviations)
    rows.append({"variant": "both, about each variant's mean", "seeds": str(len(pooled)), metric: "-",
                 "Shapiro-Wilk p": _shapiro(pooled)})
    doc.p("The same settings on disjoint seeds; the claims table gives the engine's reading of their difference "
          "(a finding: it must be undetermined). Shapiro-Wilk tests whether the per-seed values are normal, the "
          "assumption of the t-intervals and of the calibration test; it needs 3 values at least.")
    doc.table(pd.DataFrame(rows))
    p = scipy_stats.shapiro(pooled).pvalue if len(pooled) >= 3 and np.ptp(pooled) > 0 else None
    if p is None:
        doc.p("Too few seeds, or no spread, to test the normal assumption.")
    elif p >= decision.ALPHA:
        doc.p(f"The per-seed spread fits the normal assumption (Shapiro-Wilk p {p:.2f} ≥ {decision.ALPHA}), "
              f"with {len(pooled)} deviations: a test this small rejects only clear departures.")
    else:
        doc.p(f"The per-seed spread does not fit the normal assumption (Shapiro-Wilk p {p:.2g} < "
              f"{decision.ALPHA}): the table's intervals may not hold their level.")


def _shapiro(x: np.ndarray) -> str:
    if len(x) < 3 or np.ptp(x) == 0:
        return "-"
    return f"{scipy_stats.shapiro(x).pvalue:.2f}"
