"""Bigger models at the same training time: the parameter counts and costs of each variant, and the answer to the
lesson's question, which change helps most for the same training time, in words."""
import numpy as np
import pandas as pd

from analysis.report import numbers
from analysis.report.kinds import Context, what_changes
from analysis.store_reading.reader import ExerciseRuns

HISTORIES = ["val_loss", "train_time_s"]   # the budget's curves


def render(ctx: Context):
    er, doc = ctx.er, ctx.doc
    table = er.budget()
    rows = []
    for v in er.variants:
        b = table.loc[v] if table is not None and v in table.index else None
        get = lambda k: np.mean(er.values(v, k)) if er.values(v, k) else np.nan  # noqa: E731
        rows.append({"variant": v, "changes": what_changes(er.exercise, v),
                     "predicted params": f"{get('predicted_params'):,.0f}", "params": f"{get('n_params'):,.0f}",
                     "score array (one layer, predicted)": f"{get('predicted_score_array_size'):,.0f}",
                     "score array held by a training step": f"{get('score_array_size'):,.0f}",
                     "ms/step": f"{get('ms_per_step'):.1f}", "tokens/s": f"{get('tokens_per_s'):,.0f}",
                     "val_loss at the end": numbers.mean_std(er.values(v, "val_loss")),
                     "steps": er.param(v, "train.steps"),
                     "val_loss at the budget": f"{b['val_loss_at_budget']:.3f}" if b is not None else "-",
                     "step reached in the budget": "-" if b is None else f"{b['step_at_budget']:.0f}" + (
                         "" if b["reached"] else " (never reached the budget: its last point)")})
    doc.p("Predicted parameters are counted from the config before training; the predicted score array is one "
          "layer's batch × heads × context², as lesson 000 counts it; the one held by a training step is measured "
          "on the path training uses (0 where the fused attention kernel computes the scores in tiles and never "
          "holds the array). ms/step is training time only.")
    doc.table(pd.DataFrame(rows))
    doc.h(3, "Which change helps most for the same training time?")
    doc.p(paragraph(er))


def paragraph(er: ExerciseRuns) -> str:
    table, ref = er.budget(), er.exercise.budget
    if table is None or table.empty or ref not in table.index:
        return f"Not run: the answer needs {ref}'s training time and the variants' curves."
    vals = table["val_loss_at_budget"]
    best = vals.idxmin()
    mean = lambda v, k: float(np.mean(er.values(v, k))) if er.values(v, k) else float("nan")  # noqa: E731
    n = len(er.rows(ref))
    budget = float(table["budget_s"].iloc[0])
    text = [f"With the base model's training time as the budget ({budget:.1f} s, the mean of its {n} seed"
            f"{'s' * (n > 1)}), {best} reached the lowest validation loss: {vals[best]:.3f}"
            + (f", against {ref}'s {vals[ref]:.3f}." if best != ref else ".")]
    if best == ref:
        text.append("No change beat the base model within its own time.")
        ms_r = mean(ref, "ms_per_step")
        slower = [f"{v} {mean(v, 'ms_per_step'):.1f}" for v in table.index
                  if v != ref and mean(v, "ms_per_step") > ms_r]
        if slower:
            text.append(f"Each step of a bigger model costs more (ms per step: {', '.join(slower)}, against "
                        f"{ref}'s {ms_r:.1f}), so within the budget they took fewer steps than {ref}'s "
                        f"{table.loc[ref, 'last_step']}.")
    else:
        ms_b, ms_r = mean(best, "ms_per_step"), mean(ref, "ms_per_step")
        p_b, p_r = mean(best, "n_params"), mean(ref, "n_params")
        step = table.loc[best, "step_at_budget"]
        end_b, end_r = mean(best, "val_loss"), mean(ref, "val_loss")
        steps = er.param(best, "train.steps")
        text.append(f"It has {p_b:,.0f} parameters ({p_b / p_r:.1f}× {ref}'s) and takes {ms_b:.1f} ms a step "
                    f"against {ms_r:.1f} ({ms_b / ms_r:.1f}×), so within the budget it got to about step {step:.0f} "
                    f"of {table.loc[ref, 'last_step']}.")
        if ms_b > ms_r and end_b < end_r:
            text.append(f"It wins because each step helps more than it costs: at equal steps ({steps}) it ends at "
                        f"{end_b:.3f} against {ref}'s {end_r:.3f}, a lead the slower steps do not use up.")
        elif ms_b <= ms_r:
            text.append(f"It is no slower per step, so it takes at least as many steps; at equal steps ({steps}) it "
                        f"ends at {end_b:.3f} against {ref}'s {end_r:.3f}.")
        else:
            text.append(f"At equal steps ({steps}) it ends at {end_b:.3f} against {ref}'s {end_r:.3f}.")
    others = [f"{v} {vals[v]:.3f} at about step {table.loc[v, 'step_at_budget']:.0f}" for v in table.index
              if v not in (best, ref)]
    if others:
        text.append("The others at the budget: " + "; ".join(others) + ".")
    short = [v for v in table.index if not table.loc[v, "reached"]]
    if short:
        stops = ", ".join(f"{table.loc[v, 'last_time']:.1f} s" for v in short)
        text.append(f"{', '.join(short)} never reached the budget (they stopped at {stops}), "
                    f"so their last point is used.")
    gap = sorted(vals)[1] - vals[best] if len(vals) > 1 else None
    if gap is not None and n < 2:
        text.append(f"With one seed the margin ({gap:.3f}) has no interval; run more seeds to trust it.")
    return " ".join(text)

