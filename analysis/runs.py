"""The runs as pandas tables, for a notebook: `from analysis import runs`.

    df = runs.table(quick=True)             # a row per run: exercise, variant, seed, status, toggles, final metrics
    runs.aggregate(df, ["val_loss"])        # per (exercise, variant, metric): mean, std, n, 95% interval
    runs.histories(df, ["val_loss"])        # metric histories in long form: a row per (run, metric, step)
    runs.verdicts(quick=True)               # the report's claims table: a row per claim, raw and adjusted p, verdict
    runs.claims_table(quick=True)           # the same table as the engine gives it (analysis.verdicts.Table)

`make export` (`python -m analysis.runs [quick=true] [ablations=...] [out=reports/export]`) writes the three as
Parquet and CSV, and for a paper the verdict table (verdicts.csv, verdicts.tex) and each exercise's per-variant means
of its headline metrics (means/<exercise>.csv, means/<exercise>.tex), the LaTeX as booktabs tables (the packages
booktabs, and longtable for the verdicts; UTF-8 text, as LuaLaTeX and XeLaTeX read it). The store is found as
`make report` finds it; the exercises are the files of the experiments folder and those only the store holds
(sweeps). The same rows the report counts are marked `counted`: the newest finished run of each (variant, seed).
"""
import sys
from pathlib import Path

if __name__ == "__main__":  # `make export`: --help and the options answered before pandas and MLflow (4 s) load
    from lm.settings import options as _options
    _options.exit_if_wrong(_options.ReportOptions, sys.argv[1:])

import pandas as pd  # noqa: E402

from analysis.report import numbers
from analysis.verdicts import stats
from lm.tracking.naming import experiment_name
from lm.tracking.store_check import resolve_uri

HISTORIES = ["train_loss", "val_loss", "honest_val_loss", "train_time_s", "val_loss_at_position"]
KEYS = ["exercise", "variant", "seed"]


def exercise_runs(quick: bool, ablations, tracking_uri: str | None):
    """The store's URI and the chosen exercises' runs, read as `make report` reads them."""
    uri, runs, _, judged = claims_runs(quick, ablations, tracking_uri)
    return uri, [runs[name] for name in judged]


def claims_runs(quick: bool, ablations, tracking_uri: str | None):
    """What a claims table is built from, as `make report` builds it: the store's URI; the runs of the chosen
    exercises and of those their claims read (a claim that reads another exercise's runs reads them whether or not
    that exercise is chosen); every exercise the family is counted over (the files and the store's own); and the
    chosen exercises' names."""
    from analysis.report.frame import store_exercises
    from analysis.store_reading.reader import ExerciseRuns, Reader
    from lm.settings import exercises

    uri = resolve_uri(tracking_uri)
    reader = Reader(uri)
    files = exercises.load_all()
    known = {**store_exercises(reader, quick, files), **files}
    chosen = exercises.select(ablations, known)
    runs = {ex.name: ExerciseRuns(ex, experiment_name(ex.name, quick), reader) for ex in chosen}
    # every other exercise too: what the chosen claims read of them, and the variants each metric's seeds' variance
    # is pooled over (analysis/verdicts/variance.py), as in the full report
    for name in set(known) - set(runs):
        runs[name] = ExerciseRuns(known[name], experiment_name(name, quick), reader)
    return uri, runs, known, [ex.name for ex in chosen]


def table(quick: bool = False, ablations="all", tracking_uri: str | None = None) -> pd.DataFrame:
    """A row per child run of every exercise: exercise, experiment, variant, seed, status, counted (the run the
    report uses for its (variant, seed)), run_id, start_time, every param under its own name (model.n_head, and
    the flat toggles mask, pos_emb, n_head, ...) and every final metric, numeric where it is a number."""
    uri, ers = exercise_runs(quick, ablations, tracking_uri)
    parts = []
    for er in ers:
        counted = set(er.finished["run_id"])
        for df in (er.finished, er.others):
            if len(df):
                parts.append(df.assign(exercise=er.exercise.name, experiment=er.experiment,
                                       counted=df["run_id"].isin(counted)))
    if not parts:
        out = pd.DataFrame(columns=[*KEYS, "experiment", "status", "counted", "run_id", "start_time"])
    else:
        raw = pd.concat(parts, ignore_index=True)
        first = [*KEYS, "experiment", "status", "counted", "run_id", "start_time"]
        params = {c: c.removeprefix("params.") for c in raw if c.startswith("params.")  # seed: the key's already
                  and not c.startswith("params.tracking.") and c.removeprefix("params.") not in (*first, "config_hash")}
        metrics = {c: c.removeprefix("metrics.") for c in sorted(raw) if c.startswith("metrics.")}
        out = raw[[*first, *params, *metrics]] \
            .rename(columns={**params, **metrics})
        for c in params.values():
            out[c] = _typed(out[c])
        # The toggles are logged twice, flat (n_head) and under their config name (model.n_head): one column each.
        twins = [f"model.{c}" for c in params.values() if f"model.{c}" in out and out[f"model.{c}"].equals(out[c])]
        out = out.drop(columns=twins)
        out = out[[*first, *sorted(set(params.values()) - set(twins)), *metrics.values()]]
        out.attrs["metrics"] = list(metrics.values())
    out.attrs["tracking_uri"] = uri
    return out.reset_index(drop=True)


def claims_table(quick: bool = False, ablations="all", tracking_uri: str | None = None):
    """The report's verdict table (analysis.verdicts.Table), built as `make report` builds it: analysis.verdicts.table
    over the chosen exercises' runs, the family counted over every exercise."""
    from analysis import verdicts as engine

    _, runs, known, judged = claims_runs(quick, ablations, tracking_uri)
    return engine.table(runs, known, judged)


def verdicts(quick: bool = False, ablations="all", tracking_uri: str | None = None) -> pd.DataFrame:
    """The report's claims table as a frame: a row per claim of the chosen exercises, each adjusted p the same
    whichever exercises are chosen (the family is every exercise's)."""
    from analysis.report import verdict_text

    return verdict_text.frame(claims_table(quick, ablations, tracking_uri))


def _typed(column: pd.Series) -> pd.Series:
    """A param column as numbers or booleans where every value is one (MLflow keeps params as text)."""
    text = column.dropna().astype(str)
    if len(text) and text.isin(["True", "False"]).all():
        return column.map({"True": True, "False": False})
    numbers = pd.to_numeric(column, errors="coerce")
    return numbers if numbers.notna().sum() == len(text) else column


def aggregate(df: pd.DataFrame, metrics=None) -> pd.DataFrame:
    """Per (exercise, variant, metric) over the counted runs: mean, std, n, the 95% t-interval of the mean (low,
    high) and the report's 'mean ± std' text. metrics: the final metrics to aggregate, else every one."""
    counted = df[df["counted"].astype(bool)] if "counted" in df else df
    if metrics is None:  # the final metrics table() found, else every float column
        metrics = df.attrs.get("metrics") or [c for c in df if pd.api.types.is_float_dtype(df[c])]
    rows = []
    for (exercise, variant), g in counted.groupby(["exercise", "variant"], sort=False):
        for m in metrics:
            if m in g and g[m].notna().any():
                values = g[m].dropna().tolist()
                rows.append({"exercise": exercise, "variant": variant, "metric": m, **stats.summary(values),
                             "text": numbers.mean_std(values)})
    return pd.DataFrame(rows, columns=["exercise", "variant", "metric", "mean", "std", "n", "low", "high", "text"])


def histories(df: pd.DataFrame, metrics=("val_loss",), tracking_uri: str | None = None) -> pd.DataFrame:
    """Metric histories in long form: exercise, variant, seed, run_id, metric, step, value; one row per logged
    step (the last value logged at it), for every run of df."""
    from analysis.store_reading.reader import Reader

    reader = Reader(tracking_uri or df.attrs.get("tracking_uri") or resolve_uri(None))
    jobs = [(r, m) for r in df["run_id"] for m in metrics]
    reader.prefetch(jobs)
    parts = [reader.history(r, m).assign(run_id=r, metric=m) for r, m in jobs]
    parts = [p for p in parts if len(p)]
    columns = ["exercise", "variant", "seed", "run_id", "metric", "step", "value"]
    if not parts:
        return pd.DataFrame(columns=columns)
    long = pd.concat(parts, ignore_index=True)
    return long.merge(df[["exercise", "variant", "seed", "run_id"]], on="run_id")[columns]


def means(df: pd.DataFrame, exercises: dict) -> dict[str, pd.DataFrame]:
    """Each exercise's per-variant means, for a paper: a row per variant with its seeds and, for each of the
    exercise's headline metrics (lm.tracking.aggregates.headline: the losses, what its claims read, what its `ui:`
    block charts), the mean and the sample std as numbers (`<metric>`, `<metric> std`). exercises: by name."""
    from lm.tracking.aggregates import headline

    agg = aggregate(df)
    out = {}
    for name, ex in exercises.items():
        part = agg[(agg["exercise"] == name) & agg["metric"].isin(headline(ex))]
        if not len(part):
            continue
        keys = [k for k in headline(ex) if k in set(part["metric"])]
        rows = []
        for variant, g in part.groupby("variant", sort=False):
            by = g.set_index("metric")
            row = {"variant": variant, "seeds": int(by["n"].max())}
            for k in keys:
                row[k], row[f"{k} std"] = (by.loc[k, "mean"], by.loc[k, "std"]) if k in by.index else (None, None)
            rows.append(row)
        out[name] = pd.DataFrame(rows)
    return out


def latex_means(frame: pd.DataFrame, caption: str, label: str) -> str:
    """A means table as LaTeX: a row per variant, its seeds, each metric as 'mean ± std' (the mean alone for one
    seed)."""
    from lm.tracking.aggregates import number

    metrics = [c for c in frame.columns if c not in ("variant", "seeds") and not c.endswith(" std")]
    shown = frame[["variant", "seeds"]].copy()
    for m in metrics:
        shown[m] = [("-" if pd.isna(mean) else number(mean) + ("" if pd.isna(std) else f" ± {std:.2g}"))
                    for mean, std in zip(frame[m], frame[f"{m} std"])]
    return shown.to_latex(index=False, escape=True, caption=caption, label=label, position="htbp",
                          column_format="lr" + "r" * len(metrics))


# The verdict table's columns a paper shows (the CSV has them all); those the table no longer has are left out.
PAPER = ["exercise", "claim", "ours", "margin (interval)", "seeds", "verdict"]


def latex_verdicts(frame: pd.DataFrame) -> str:
    """The verdict table as a LaTeX longtable: a row per claim, its words in a paragraph column."""
    shown = frame[[c for c in PAPER if c in frame] or list(frame)]
    return shown.to_latex(index=False, escape=True, longtable=True,
                          column_format="".join("p{6cm}" if c == "claim" else "l" for c in shown.columns),
                          caption="Every claim's verdict", label="tab:verdicts")


def export(out: Path, quick: bool = False, ablations="all", tracking_uri: str | None = None) -> list[Path]:
    """runs, histories and aggregate, each as .parquet and .csv in out; the verdict table as verdicts.csv and
    verdicts.tex; each exercise's per-variant means as means/<exercise>.csv and .tex."""
    df = table(quick, ablations, tracking_uri)
    tables = {"runs": df, "aggregate": aggregate(df), "histories": histories(df, HISTORIES)}
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, t in tables.items():
        t.to_parquet(out / f"{name}.parquet", index=False)
        t.to_csv(out / f"{name}.csv", index=False)
        written += [out / f"{name}.parquet", out / f"{name}.csv"]
    from analysis import verdicts as engine
    from analysis.report import verdict_text

    _, runs, known, judged = claims_runs(quick, ablations, tracking_uri)
    claims = verdict_text.frame(engine.table(runs, known, judged))   # as claims_table builds it, the runs read once
    claims.to_csv(out / "verdicts.csv", index=False)
    (out / "verdicts.tex").write_text(latex_verdicts(claims), encoding="utf-8")
    written += [out / "verdicts.csv", out / "verdicts.tex"]
    (out / "means").mkdir(exist_ok=True)
    chosen = {name: runs[name].exercise for name in judged}
    for name, frame in means(df, chosen).items():
        frame.to_csv(out / "means" / f"{name}.csv", index=False)
        (out / "means" / f"{name}.tex").write_text(latex_means(frame, chosen[name].title, f"tab:{name}"),
                                                  encoding="utf-8")
        written += [out / "means" / f"{name}.csv", out / "means" / f"{name}.tex"]
    return written


def main(argv: list[str] | None = None) -> int:
    """`make export`: the options of `make report` (quick, ablations, out, tracking_uri), out defaulting to
    reports/export."""
    from analysis.options import parse
    from analysis.store_reading.reader import StoreError
    from lm.settings.errors import ConfigError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        opts = parse(argv)
        out = Path(opts.out if any(a.startswith("out=") for a in argv) else "reports/export")
        written = export(out, opts.quick, opts.ablations, opts.tracking_uri)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {', '.join(str(p.relative_to(out)) for p in written)} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
