"""`make report`: reports/report.html and reports/report.md from the runs in MLflow, logged back as a run.

    python -m analysis.report [quick=true] [ablations=[baseline,heads]] [out=reports] [log=false] [tracking_uri=...]

Everything is read through MLflow's client (search_runs, metric histories, artifacts), so the report is the same
on a remote tracking server. The store is found as training finds it: MLFLOW_TRACKING_URI, else TINYGPT_STORE,
else ./mlruns/mlflow.db. Exit status: 0 written, 1 nothing to report, 2 a bad option.
"""
import sys

if __name__ == "__main__":  # the options checked before the imports below, pandas and MLflow (analysis/options.py)
    from lm import cli
    from analysis import options
    cli.before_imports(options.front)

import math
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import claims, figures, stats
from analysis.options import Options, OptionError, parse  # noqa: F401
from analysis.document import Doc
from analysis.heads import TL_CONVENTION, headline, strongest
from analysis.store import ExerciseRuns, Reader, StoreError, sqlite_path
from lm import exercises
from lm.errors import ConfigError
from lm.store_check import resolve_uri

SEPARATOR = "\n\n---\n\n"   # between samples in samples.txt


# --- helpers ---------------------------------------------------------------------------------------------
def what_changes(ex: exercises.Exercise, variant: str) -> str:
    return ", ".join(ex.variants.get(variant, [])) or "(as the exercise's base)"


def reference(ex: exercises.Exercise) -> str:
    """The variant others are compared with: the budget's, else the one that changes nothing, else the first."""
    if ex.budget:
        return ex.budget
    return next((v for v, o in ex.variants.items() if not o), next(iter(ex.variants)))


def samples(er: ExerciseRuns, variant: str) -> list[str]:
    run = er.first(variant)
    path = run is not None and er.reader.artifact(run.run_id, "samples.txt")
    return path.read_text(encoding="utf-8").split(SEPARATOR) if path else []


def first_sample(doc: Doc, er: ExerciseRuns, variant: str, title: str, limit: int | None = None):
    texts = samples(er, variant)
    if texts:
        doc.h(3, f"{title} ({first_seed_note(er, variant)}, sample 1 of {len(texts)})")
        doc.pre(texts[0][:limit])


def not_run(doc: Doc, what: str):
    doc.p(f"Not run: {what} has no finished run in this store.")


def first_seed_note(er: ExerciseRuns, variant: str) -> str:
    run = er.first(variant)
    return f"{variant}, seed {run.seed}" if run is not None else variant


# --- sections --------------------------------------------------------------------------------------------
def overview(doc: Doc, runs: dict[str, ExerciseRuns], opts: Options, uri: str):
    doc.p(f"Read from {uri} ({'the quick suite: experiments quick/<exercise>' if opts.quick else 'the full suite'}) "
          f"on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Numbers are means over seeds, "
          f"given as mean ± standard deviation where there is more than one seed; blocks and heads are numbered "
          f"from 1. When a (variant, seed) was run more than once, the newest finished run counts.")
    rows = []
    for name, er in runs.items():
        rows.append({"exercise": name, "experiment": er.experiment, "title": er.exercise.title,
                     "variants run": f"{len(er.variants)} of {len(er.exercise.variants)}",
                     "finished runs": len(er.finished),
                     "seeds": ", ".join(map(str, sorted(er.finished["seed"].dropna().unique()))) or "-",
                     "failed or unfinished": int((~er.others["superseded"]).sum()) if len(er.others) else 0})
    doc.table(pd.DataFrame(rows))


def perplexity(doc: Doc, runs: dict[str, ExerciseRuns]):
    doc.h(2, "Validation loss and perplexity")
    doc.p("Validation loss in nats per character; perplexity is e^loss, per seed, then mean ± std. The uniform "
          "guess and the bigram table (counts + 1) are the lessons' reference points for each corpus.")
    rows, corpora = [], {}
    for name, er in runs.items():
        for v in er.variants:
            corpus = er.param(v, "data.corpus") or "?"
            for key in ("uniform_loss", "bigram_loss"):
                corpora.setdefault((corpus, key), er.values(v, key))
    for (corpus, key), values in sorted(corpora.items(), key=lambda kv: (kv[0][0] != "shakespeare", kv[0][0],
                                                                        kv[0][1] != "uniform_loss")):
        if values:
            x = float(np.mean(values))
            what = "uniform guess" if key == "uniform_loss" else "bigram table"
            rows.append({"exercise": "-", "variant": f"{what} ({corpus})", "changes": "-", "steps": "-",
                         "val_loss": f"{x:.3f}", "perplexity": f"{math.exp(x):.2f}", "seeds": "-"})
    for name, er in runs.items():
        for v in er.exercise.variants:
            loss = er.values(v, "val_loss")
            note = " (as trained: sees the answer)" if er.param(v, "model.mask") == "False" else ""
            if er.exercise.init_from:
                note = f" (samples {er.exercise.init_from}'s model)"
            rows.append({"exercise": name, "variant": v + note, "changes": what_changes(er.exercise, v),
                         "steps": er.param(v, "train.steps") or "-",
                         "val_loss": stats.mean_std(loss) if loss else "not run",
                         "perplexity": stats.mean_std([math.exp(x) for x in loss], 2) if loss else "not run",
                         "seeds": len(loss)})
    doc.table(pd.DataFrame(rows))


def claim_table(doc: Doc, runs: dict[str, ExerciseRuns]) -> dict[str, int]:
    doc.h(2, "The lessons' claims")
    doc.p("Each claim's check (experiments/*.yaml) evaluated on our runs: reproduced when it holds, not reproduced "
          "when it fails, not run when a variant or a number it needs is missing from the store (a quick store "
          "logs no step 500, for instance). 'Ours' is the mean over seeds. A check that orders variants is also "
          "read against the seeds: within seed noise when the 95% interval of a difference it relies on holds "
          "zero, whichever way the means fell.")
    rows = []
    for name, er in runs.items():
        for c in er.exercise.claims:
            v = claims.judge(c, er.lookup, list(er.exercise.variants), er.values)
            rows.append({"exercise": name, "claim": v.text, "lessons": v.lesson or "-", "ours": v.ours or "-",
                         "verdict": v.verdict or "-", "note": v.note})
    df = pd.DataFrame(rows)
    counts = df["verdict"].value_counts().to_dict() if len(df) else {}
    doc.p("; ".join(f"{counts.get(k, 0)} {k}" for k in claims.VERDICTS) + ".")
    doc.table(df)
    return counts


def comparisons(doc: Doc, runs: dict[str, ExerciseRuns]):
    doc.h(2, "Differences between variants")
    doc.p("Each variant against its exercise's reference: the variant whose training time is the budget, else the "
          "one that changes nothing (the exercise's base model), else the first listed. The difference is "
          "variant − reference of the per-seed means, with a 95% Welch t-interval over seeds. The exercise that "
          "trains nothing (it samples another's models) is compared on word validity; the no-mask exercise also "
          "on the honest loss.")
    rows = []
    for name, er in runs.items():
        ex, ref = er.exercise, reference(er.exercise)
        keys = ["word_validity", "word_validity_stripped"] if ex.init_from else ["val_loss"]
        if any(er.values(v, "honest_val_loss") for v in er.variants):
            keys.append("honest_val_loss")
        for v in ex.variants:
            if v == ref:
                continue
            for key in keys:
                a, b = er.values(v, key), er.values(ref, key)
                row = {"exercise": name, "variant": v, "reference": ref, "metric": key}
                if not a or not b:
                    rows.append({**row, "variant mean": stats.mean_std(a), "reference mean": stats.mean_std(b),
                                 "difference (95% CI)": "-", "seeds": f"{len(a)} vs {len(b)}",
                                 "reading": f"not run: {v if not a else ref}"})
                    continue
                d = stats.welch(a, b)
                rows.append({**row, "variant mean": stats.mean_std(a), "reference mean": stats.mean_std(b),
                             "difference (95% CI)": stats.interval(d), "seeds": f"{d.n_a} vs {d.n_b}",
                             "reading": stats.reading(d, v)})
    if rows:
        doc.table(pd.DataFrame(rows))
    else:
        doc.p("No exercise has two variants to compare in this store.")


def failures(doc: Doc, runs: dict[str, ExerciseRuns]):
    doc.h(2, "Failed and unfinished runs")
    rows = []
    for name, er in runs.items():
        for r in er.others.to_dict("records"):
            r = {k: v for k, v in r.items() if isinstance(v, str) or not pd.isna(v)}  # NaN: a tag this run lacks
            rows.append({"exercise": name, "run": r.get("tags.mlflow.runName") or f"{r['variant']}/seed{r['seed']}",
                         "run id": r["run_id"], "status": r["status"],
                         "reason": r.get("tags.failure_reason") or "-",
                         "diverged": "yes" if r.get("tags.diverged") == "true" else "no",
                         "superseded by a finished run": "yes" if r["superseded"] else "no"})
    if not rows:
        doc.p("None: every run in the store finished.")
        return
    doc.p("Runs that did not finish are listed here and left out of every number above; a diverged run keeps "
          "its reason.")
    doc.table(pd.DataFrame(rows))


def baseline(doc: Doc, er: ExerciseRuns | None, heads_by_run: dict):
    doc.h(2, "The base model")
    if er is None or not er.variants:
        return not_run(doc, "the baseline exercise")
    v = er.variants[0]
    train, val = er.history(v, "train_loss"), er.history(v, "val_loss")
    uniform, bigram = er.values(v, "uniform_loss"), er.values(v, "bigram_loss")
    doc.figure("learning_curves", figures.learning_curves(
        train, val, np.mean(uniform) if uniform else None, np.mean(bigram) if bigram else None,
        f"The base model: loss against step ({len(er.rows(v))} seed{'s' * (len(er.rows(v)) > 1)})"),
        "Training loss (each step's batch) and validation loss, mean over seeds with a ± 1 std band, against "
        "the uniform guess and the bigram table, as in lesson 002's plot.")
    run = er.first(v)
    probe = er.reader.json(run.run_id, "probe.json")
    if probe:
        top = ",  ".join(f"{c!r} {p:.0%}" for c, p in probe["top"])
        doc.p(f"After {probe['prompt']!r} ({first_seed_note(er, v)}) the likeliest next characters are: {top}. "
              f"The lesson: 'e' 65%, 'r' 8%, 'l' 8%.")
    att, table = er.reader.json(run.run_id, "attention.json"), heads_by_run.get(run.run_id)
    if att:
        line = "".join(att["chars"])
        doc.figure("baseline_heads", figures.attention_grid([("base", att)],
                                                            f"Every head of the base model on {line!r}"),
                   f"Attention weights of every head ({first_seed_note(er, v)}) on {line!r}: one row per query "
                   f"character, one column per key it reads; above the diagonal is masked. ␣ is a space.")
    if att and table is not None and table[["prev_token_score", "word_start_score"]].notna().any().all():
        prev, word = strongest(table, "prev_token_score"), strongest(table, "word_start_score")
        doc.figure("baseline_two_heads", figures.two_heads(att, [
            (*prev, f"previous character (score {table_value(table, prev, 'prev_token_score'):.2f})"),
            (*word, f"start of the word (score {table_value(table, word, 'word_start_score'):.2f})")],
            "Lesson 000's two views: the strongest previous-token head and the strongest word-start head"),
            "The head with the highest previous-token score and the head with the highest word-start score "
            "(the mean weight on the space before the current word), chosen from the run's heads.csv.")


def table_value(table: pd.DataFrame, bh: tuple[int, int], column: str) -> float:
    return float(table.loc[(table["block"] == bh[0]) & (table["head"] == bh[1]), column].iloc[0])


def head_statistics(doc: Doc, runs: dict[str, ExerciseRuns], heads_by_run: dict):
    doc.h(2, "Head statistics")
    doc.p("Measured at the end of each run on validation windows (heads.csv). Blocks and heads are numbered from "
          "1, as in the lessons.")
    doc.p(TL_CONVENTION)
    base = runs.get("baseline")
    run = base.first(base.variants[0]) if base is not None and base.variants else None
    table = heads_by_run.get(run.run_id) if run is not None else None
    if table is not None:
        doc.p(f"The base model's heads ({first_seed_note(base, base.variants[0])}), as lesson 000 lists them "
              f"(the most common distance back to the heaviest key, and the share of positions where it is that "
              f"distance):")
        doc.items(table.sort_values(["block", "head"])["label"].tolist())
        doc.p("The lesson: block 1, head 3: 1 back at 100% of positions; block 1, head 1: 2 back at 94%; "
              "block 2 reads the start of the word.")
    else:
        not_run(doc, "the baseline exercise")
    rows = []
    for name, er in runs.items():
        if er.exercise.init_from:
            continue  # the same models as the exercise it samples
        for v in er.variants:
            tables = [heads_by_run[r] for r in er.rows(v)["run_id"] if r in heads_by_run]
            if not tables:
                continue
            first = tables[0]
            mean = pd.DataFrame([headline(t) for t in tables]).mean()
            b, h = strongest(first, "prev_token_score")
            rows.append({"exercise": name, "variant": v,
                         "blocks × heads": f"{first['block'].max()} × {first['head'].max()}",
                         "strongest previous-token head": f"block {b}, head {h}",
                         "1 back: best share": _pct(mean.get("heads_offset1_share_max")),
                         "2 back: best share": _pct(mean.get("heads_offset2_share_max")),
                         "prev-token max": _num(mean.get("heads_prev_token_max")),
                         "duplicate max": _num(mean.get("heads_dup_token_max")),
                         "word start max": _num(mean.get("heads_word_start_max")),
                         "induction max": _num(mean.get("heads_induction_max")),
                         "positional max": _num(mean.get("heads_positional_max")),
                         "entropy (normalised) mean": _num(mean.get("heads_entropy_norm_mean")),
                         "heaviest weight mean": _num(mean.get("heads_max_weight_mean")),
                         "seeds": len(tables)})
    if rows:
        doc.p("Per variant, the best head's score (max over heads) or the mean over heads, then the mean over "
              "seeds; the strongest previous-token head is the lowest seed's (of those with a heads.csv).")
        doc.table(pd.DataFrame(rows))


def column(df: pd.DataFrame, name: str) -> pd.Series:
    """A numeric column of search_runs' table; NaN where a run did not log it, or no run did."""
    return pd.to_numeric(df[name], errors="coerce") if name in df else pd.Series(np.nan, index=df.index)


def _num(x) -> str:
    return "-" if x is None or pd.isna(x) else f"{x:.2f}"


def _pct(x) -> str:
    return "-" if x is None or pd.isna(x) else f"{x:.0%}"


def temperature(doc: Doc, er: ExerciseRuns | None):
    doc.h(2, "Temperature against word validity")
    if er is None or not er.variants:
        return not_run(doc, "the temperature exercise")
    df = pd.DataFrame({"temperature": column(er.finished, "params.sample.temperature"), "seed": er.finished["seed"],
                       "word_validity": column(er.finished, "metrics.word_validity"),
                       "word_validity_stripped": column(er.finished, "metrics.word_validity_stripped")})
    if df[["temperature", "word_validity"]].notna().all(axis=1).any():
        doc.figure("temperature", figures.temperature(df, "Word validity against temperature"),
                   "The share of sampled words (split on whitespace) that occur in the training text, and the same "
                   "with punctuation stripped; mean over seeds with a ± 1 std band.")
    for v in er.variants:
        first_sample(doc, er, v, f"Temperature {er.param(v, 'sample.temperature')}")


def nomask(doc: Doc, er: ExerciseRuns | None):
    doc.h(2, "The no-mask cheat")
    if er is None or not er.variants:
        return not_run(doc, "the no-mask exercise")
    parts = []
    for v in er.variants:
        parts.append(er.history(v, "train_loss").assign(variant=v, loss="training loss, as trained"))
        parts.append(er.history(v, "honest_val_loss").assign(variant=v, loss="honest validation loss"))
    parts = [p for p in parts if len(p)]
    if parts:
        doc.figure("nomask", figures.lines(pd.concat(parts, ignore_index=True), "step", "variant",
                                           "Without the mask: the loss as trained against the honest loss", "step",
                                           "loss (nats per character)", style="loss"),
                   "Training loss as trained (without the mask each position also sees the character it must "
                   "predict) and the honest validation loss (each prediction made from its prefix alone), for the "
                   "masked and the unmasked model; mean over seeds.")
    for v in er.variants:
        first_sample(doc, er, v, f"A sample from {v}", limit=600)


def scaling(doc: Doc, er: ExerciseRuns | None):
    doc.h(2, "Bigger models")
    if er is None or not er.variants:
        return not_run(doc, "the scaling exercise")
    parts = []
    for v in er.variants:
        loss = er.history(v, "val_loss")
        time_ = er.history(v, "train_time_s").rename(columns={"value": "time"})
        start = loss[loss["step"] == 0][["seed", "step"]].assign(time=0.0)
        parts.append(loss.merge(pd.concat([start, time_], ignore_index=True), on=["seed", "step"]).assign(variant=v))
    curves = pd.concat(parts, ignore_index=True)
    table = er.budget()
    budget = float(table["budget_s"].iloc[0]) if table is not None and len(table) else None
    if len(curves):
        doc.figure("scaling", figures.scaling(curves, budget, "Bigger models: validation loss"),
                   "Validation loss against training seconds (validation excluded) and against steps, one line per "
                   "variant; the dashed line is the budget, the base model's training time.")
    rows = []
    for v in er.variants:
        b = table.loc[v] if table is not None and v in table.index else None
        get = lambda k: np.mean(er.values(v, k)) if er.values(v, k) else np.nan  # noqa: E731
        rows.append({"variant": v, "changes": what_changes(er.exercise, v),
                     "predicted params": f"{get('predicted_params'):,.0f}", "params": f"{get('n_params'):,.0f}",
                     "score array (one layer)": f"{get('score_array_size'):,.0f}",
                     "ms/step": f"{get('ms_per_step'):.1f}", "tokens/s": f"{get('tokens_per_s'):,.0f}",
                     "val_loss at the end": stats.mean_std(er.values(v, "val_loss")),
                     "steps": er.param(v, "train.steps"),
                     "val_loss at the budget": f"{b['val_loss_at_budget']:.3f}" if b is not None else "-",
                     "step reached in the budget": "-" if b is None else f"{b['step_at_budget']:.0f}" + (
                         "" if b["reached"] else " (never reached the budget: its last point)")})
    doc.p("Predicted parameters are counted from the config before training; the score array is one layer's "
          "batch × heads × context², as lesson 000 counts it. ms/step is training time only.")
    doc.table(pd.DataFrame(rows))
    doc.h(3, "Which change helps most for the same training time?")
    doc.p(scaling_paragraph(er))


def scaling_paragraph(er: ExerciseRuns) -> str:
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


def context(doc: Doc, er: ExerciseRuns | None):
    doc.h(2, "Context length")
    if er is None or not er.variants:
        return not_run(doc, "the context exercise")
    df = pd.concat([er.history(v, "val_loss_at_position").assign(variant=v) for v in er.variants],
                   ignore_index=True)
    if len(df):
        doc.figure("context", figures.lines(df, "step", "variant", "Validation loss by position in the window",
                                            "position in the window (characters of context before it)",
                                            "validation loss"),
                   "Loss of the prediction at each position of the window, mean over seeds: a position sees that "
                   "many characters before it, so the curve shows what more context buys, and where a short "
                   "context stops.")


def heads_exercise(doc: Doc, er: ExerciseRuns | None):
    doc.h(2, "One head against many")
    if er is None or not er.variants:
        return not_run(doc, "the heads exercise")
    df = pd.DataFrame({"n_head": column(er.finished, "params.n_head"), "seed": er.finished["seed"],
                       "value": column(er.finished, "metrics.val_loss")}).dropna()
    width = er.param(er.variants[0], "model.n_embd")
    if len(df):
        doc.figure("heads_loss", figures.loss_per_head_count(df.astype({"n_head": int}), "Validation loss per head "
                                                             "count", f"heads (the same {width} numbers per "
                                                             "character, split)"),
                   "Final validation loss per head count: the mean over seeds with ± 1 std, and each seed.")
    pair = [(v, er.reader.json(er.first(v).run_id, "attention.json")) for v in ("h1", "h4") if v in er.variants]
    pair = [(f"{v} ({er.param(v, 'n_head')} head{'s' * (er.param(v, 'n_head') != '1')})", a) for v, a in pair if a]
    if pair:
        line = "".join(pair[0][1]["chars"])
        doc.figure("heads_maps", figures.attention_grid(pair, f"One head against four on {line!r}"),
                   "Attention maps of the 1-head and the 4-head model (lowest seed) on the same line.")


def names(doc: Doc, runs: dict[str, ExerciseRuns]):
    doc.h(2, "Samples")
    base = runs.get("baseline")
    if base is not None and base.variants:
        v = base.variants[0]
        first_sample(doc, base, v, f"The base model at temperature {base.param(v, 'sample.temperature')}")
    else:
        not_run(doc, "the baseline exercise")
    micro = runs.get("microgpt")
    if micro is not None and micro.variants:
        texts = samples(micro, micro.variants[0])
        if texts:
            doc.h(3, f"microgpt's names ({first_seed_note(micro, micro.variants[0])}, "
                     f"temperature {micro.param(micro.variants[0], 'sample.temperature')})")
            doc.p(", ".join(t.strip() or "(empty)" for t in texts))
    else:
        not_run(doc, "the microgpt exercise")


# What each exercise's sections read beyond search_runs: metric histories and artifacts of every finished run.
HISTORIES = {"baseline": ["train_loss", "val_loss"], "nomask": ["train_loss", "honest_val_loss"],
             "scaling": ["val_loss", "train_time_s"], "context": ["val_loss_at_position"]}
ARTIFACTS = {"baseline": ["probe.json", "attention.json", "samples.txt"], "heads": ["attention.json"],
             "temperature": ["samples.txt"], "nomask": ["samples.txt"], "microgpt": ["samples.txt"]}


def prefetch(runs: dict[str, ExerciseRuns]) -> None:
    histories, artifacts = [], []
    for name, er in runs.items():
        ids = er.finished["run_id"].tolist()
        histories += [(r, k) for r in ids for k in HISTORIES.get(name, [])]
        artifacts += [(r, a) for r in ids for a in ARTIFACTS.get(name, [])]
        artifacts += [(r, "heads.csv") for r in ids if not er.exercise.init_from]
    if runs:
        next(iter(runs.values())).reader.prefetch(histories, artifacts)


# --- the whole report ------------------------------------------------------------------------------------
def build(runs: dict[str, ExerciseRuns], opts: Options, uri: str, out: Path, title: str) -> tuple[Doc, dict]:
    figs = out / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    for old in figs.glob("*.png"):
        old.unlink()
    heads_by_run = {}
    prefetch(runs)
    for er in runs.values():
        if er.exercise.init_from:
            continue
        for run_id in er.finished["run_id"]:
            path = er.reader.artifact(run_id, "heads.csv")
            if path:
                heads_by_run[run_id] = pd.read_csv(path)
    doc = Doc(figs)
    doc.h(1, title)
    overview(doc, runs, opts, uri)
    perplexity(doc, runs)
    counts = claim_table(doc, runs)
    comparisons(doc, runs)
    failures(doc, runs)
    baseline(doc, runs.get("baseline"), heads_by_run)
    head_statistics(doc, runs, heads_by_run)
    temperature(doc, runs.get("temperature"))
    nomask(doc, runs.get("nomask"))
    scaling(doc, runs.get("scaling"))
    context(doc, runs.get("context"))
    heads_exercise(doc, runs.get("heads"))
    names(doc, runs)
    return doc, counts


def log_report(reader: Reader, out: Path, opts: Options, counts: dict) -> str:
    """One run per report in the experiment `report` (or `quick/report`): the files and the verdict counts."""
    name = ("quick/" if opts.quick else "") + "report"
    client = reader.client
    exp = client.get_experiment_by_name(name)
    if exp is None:
        db = sqlite_path(reader.uri)  # beside the database, as the training runs' artifacts are
        location = (db.parent / "artifacts" / name.replace("/", "-")).as_uri() if db else None
        exp_id = client.create_experiment(name, artifact_location=location)
    else:
        exp_id = exp.experiment_id
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(exp_id)
    run = client.create_run(exp_id, run_name=f"report {datetime.now():%Y-%m-%d %H:%M}",
                            tags={"ablations": opts.ablations, "quick": str(opts.quick).lower()})
    for k, v in counts.items():
        client.log_metric(run.info.run_id, f"claims_{k.replace(' ', '_')}", v)
    for file in ("report.html", "report.md"):  # only what this report wrote, whatever else is in `out`
        client.log_artifact(run.info.run_id, str(out / file))
    client.log_artifacts(run.info.run_id, str(out / "figures"), "figures")
    client.set_terminated(run.info.run_id, "FINISHED")
    return run.info.run_id


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    started = time.time()
    try:
        opts = parse(argv)
        chosen = exercises.select(opts.ablations)
    except (OptionError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    uri = resolve_uri(opts.tracking_uri)
    prefix = "quick/" if opts.quick else ""
    try:
        reader = Reader(uri)
        runs = {ex.name: ExerciseRuns(ex, prefix + ex.name, reader) for ex in chosen}
        if not any(len(er.finished) or len(er.others) for er in runs.values()):
            raise StoreError(f"no runs of the {'quick ' if opts.quick else ''}exercises in {uri} (experiments "
                             f"{prefix}<exercise>); run `make ablations{'-quick' if opts.quick else ''}` first")
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    out = Path(opts.out)
    title = "tinygpt ablations: the lessons' exercises, reproduced" + (" (quick suite)" if opts.quick else "")
    doc, counts = build(runs, opts, uri, out, title)
    (out / "report.md").write_text(doc.markdown(), encoding="utf-8")
    (out / "report.html").write_text(doc.html(title), encoding="utf-8")
    run_id = log_report(reader, out, opts, counts) if opts.log else None
    print(f"wrote {out / 'report.html'} and {out / 'report.md'} in {time.time() - started:.1f} s"
          + (f"; logged as run {run_id} in experiment '{prefix}report'" if run_id else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
