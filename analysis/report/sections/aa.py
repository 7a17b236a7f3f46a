"""The A/A control's section: each variant's seeds and numbers. Its comparisons (Welch's t, the paired t, a prediction,
the one-sample t of two exchangeable heads) are the claims table's `aa` rows, in a family of their own, and the claims
section sets how many came out firm beside the rate `make calibrate` measured (frame.control_line)."""
import numpy as np
import pandas as pd

from analysis.report import numbers
from analysis.report.kinds import Context


def render(ctx: Context, metric: str = "val_loss"):
    er, doc = ctx.er, ctx.doc
    rows = []
    for v in er.variants:
        per = er.per_seed(v, metric) or {}
        x = np.array([per[s] for s in sorted(per)], float)
        rows.append({"variant": v, "seeds": ", ".join(map(str, sorted(per))), metric: numbers.mean_std(x, 4)})
    doc.p("The same settings on disjoint seeds: whatever differs between them is chance. The claims table's aa rows "
          "judge them through every path a claim can take, in a family of their own, and the claims section says "
          "how many came out firm against the rate `make calibrate` measured for that family.")
    doc.table(pd.DataFrame(rows))
