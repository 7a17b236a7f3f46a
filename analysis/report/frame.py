"""`make report`: reports/report.html and reports/report.md from the runs in MLflow, logged back as a run.

    python -m analysis.report [quick=true] [ablations=[baseline,heads]] [out=reports] [log=false] [tracking_uri=...]
                              [docs=docs] [svg=true]

With docs=<folder>, the same table also writes <folder>/lesson-claims.md and <folder>/results.md
(analysis/report/docs_pages.py): `make report ARGS="docs=docs"` after a full `make ablations` keeps docs/ current.
With svg=true, each figure is also written as SVG beside its PNG in <out>/figures, for a paper.

Everything is read through MLflow's client (search_runs, metric histories, artifacts), so the report is the same
on a remote tracking server. The store is found as training finds it: MLFLOW_TRACKING_URI, else TINYGPT_STORE,
else ./mlruns/mlflow.db. This module is the document's frame (overview, perplexity, claims, comparisons,
failures, head statistics); each exercise's section is what the `report:` block of its YAML declares
(analysis/report/sections), for the files of $TINYGPT_EXPERIMENTS (else experiments/) and the store's own exercises.
Exit status: 0 written, 1 nothing to report, 2 a bad option.
"""
import math
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from analysis import calibration, verdicts
from analysis.options import parse
from analysis.report import (attention_view, docs_pages, environments, knockout, numbers, outcomes, painter,
                             parent_runs, sections, verdict_grid, verdict_text)
from analysis.report.document import Doc
from analysis.report.kinds import Context, SectionKind, what_changes
from analysis.store_reading.reader import ExerciseRuns, Reader, StoreError
from analysis.verdicts import claims, decision, stats
from analysis.verdicts.decision import FIRM
from lm.heads.summary import headline, strongest
from lm.heads.table import STATISTICS, TL_CONVENTION
from lm.settings import exercises
from lm.settings.claims import Source
from lm.settings.errors import ConfigError
from lm.settings.exercises import terms, tree
from lm.settings.options import ReportOptions
from lm.tracking import store_check
from lm.tracking.naming import QUICK_PREFIX, experiment_name
from lm.tracking.store import EXPERIMENT_KIND
from lm.tracking.store_check import redact, resolve_uri, sqlite_file


# --- helpers ---------------------------------------------------------------------------------------------
def reference(ex: exercises.Exercise) -> str:
    """The variant others are compared with: the budget's, else the one that changes nothing, else the first."""
    if ex.budget:
        return ex.budget
    return next((v for v, o in ex.variants.items() if not o), next(iter(ex.variants)))


# --- sections --------------------------------------------------------------------------------------------
def overview_line(doc: Doc, runs: dict[str, ExerciseRuns], opts: ReportOptions, uri: str):
    """One line under the title: what was read, and when."""
    which = "the quick suite" if opts.quick else "the full suite"
    finished = sum(len(er.finished) for er in runs.values())
    doc.p(f"{finished} finished runs of {len(runs)} exercises ({which}), read from {store_check.shown(uri)} on "
          f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Every claim's verdict, per exercise; each cell links to "
          f"its claim at the head of its exercise's section.")


def overview(doc: Doc, runs: dict[str, ExerciseRuns], opts: ReportOptions, uri: str):
    which = 'the quick suite: experiments quick/<exercise>' if opts.quick else 'the full suite'
    doc.p(f"Read from {store_check.shown(uri)} ({which}). Numbers are means over seeds, "
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
                         "val_loss": numbers.mean_std(loss) if loss else "not run",
                         "perplexity": numbers.mean_std([math.exp(x) for x in loss], 2) if loss else "not run",
                         "seeds": len(loss)})
    doc.table(pd.DataFrame(rows), fold="Each variant's validation loss and perplexity, beside the uniform guess and "
                                       "the bigram table")


def exercise_claims(doc: Doc, table: verdicts.Table, name: str) -> None:
    """The exercise's claims at the head of its section: each claim (ours marked), the lesson's words, ours, the
    margin with its interval, the seeds and the verdict, each row the target of its cell in the verdict grid."""
    rows = table.of(name)
    if not rows:
        return doc.p("This exercise makes no claim: its pictures answer its question.")
    frame = pd.DataFrame([{"#": r.index, "claim": r.verdict.text + (" (ours: " + r.claim.why + ")"
                                                                   if r.claim.source == Source.OURS else ""),
                           "the lesson's words": r.verdict.lesson or "-", "ours": numbers.ours(r.verdict.ours) or "-",
                           "margin (interval)": verdict_text.interval(r.verdict) or "-",
                           "seeds": verdict_text.seeds(r.verdict) or "-",
                           "verdict": verdict_text.label(r.verdict) or "-"} for r in rows])
    doc.table(frame, ids=[verdict_grid.anchor(r) for r in rows],
              classes={"verdict": [f"v-{outcomes.slug(outcomes.outcome(r))}" for r in rows]},
              wide=("claim", "the lesson's words"))
    notes = [f"#{r.index}: {note}" for r in rows if (note := verdict_text.note(r.verdict))]
    if notes:
        doc.items(notes)


def claim_table(doc: Doc, table: verdicts.Table) -> None:
    """Every claim with every column the engine gives (its p and adjusted p, method and note), folded, and how a
    verdict is reached."""
    doc.h(2, "The lessons' claims")
    doc.p("Each claim's check (experiments/*.yaml) evaluated on our runs. 'Ours' is the mean over seeds. Every "
          "comparison in a check gets a test of its margin, the amount by which it holds: a paired t over the "
          "per-seed margins where the variants share their seeds (the same seed sees the same batches), a "
          "one-sample t for one variant against a constant, Welch's where the seeds differ; where every seed "
          "agrees (a count that ties, a tag), the exact sign test over seeds. Where the runs logged each validation "
          "window's loss, the windows' error of the margin is added to the seeds', paired window by window (both "
          "shown); a number scored on fixed windows without them is said to be (its interval is for those windows). "
          "A comparison is reproduced when its p, adjusted over the family (below), is under the level and its "
          "margin positive, not reproduced when under the level and negative, within seed noise otherwise; its "
          "interval is shown at the level its verdict uses. A chain or an 'and' is reproduced only when every part "
          "is. Deterministic checks (a count every seed gives alike) are judged on the numbers, with no error to "
          "control, and say so. Not run: a variant or a number the check needs is missing from the store (a quick "
          "store logs no step 500, for instance). Each exercise's section opens with its own claims; here they are "
          "all, with every column.")
    doc.p(verdict_text.preamble(table))
    slugs = [f"v-{outcomes.slug(outcomes.outcome(r))}" for r in table.rows]
    doc.table(verdict_text.frame(table), classes={"verdict": slugs},
              fold=f"Every claim ({len(table.rows)}), with its p, adjusted p, method and note",
              wide=("claim", "lessons", "note"))
    line = control_line(table)
    if line:
        doc.p(line)


def control_line(table: verdicts.Table) -> str | None:
    """How many of the A/A control's comparisons came out firm, against the rate `make calibrate` measured for its
    family; None without a control in the table."""
    controls = [c for r in table.rows if r.verdict.control for c in r.verdict.comparisons]
    if not controls:
        return None
    firm = sum(c.verdict in FIRM for c in controls)
    judged = sum(c.raw_p is not None for c in controls)
    got = calibration.measured()
    expected = (f"`make calibrate` measured a firm one in {got['control_first']:.2%} of {got['tables']:,} simulated "
                f"stores at the first look ({got['date']})") if got else \
        "`make calibrate ARGS=record=true` has not recorded the rate its simulation gives"
    return (f"The A/A control (experiments/aa.yaml: identical settings, so a firm comparison is a false one): {firm} "
            f"of {len(controls)} comparisons firm, {judged} of them judged ({', '.join(c.label for c in controls)}); "
            f"its family is held at {decision.ALPHA:.0%} over its looks, and {expected}.")


DIFFERENCE = f"difference (95% interval; {numbers.DESCRIPTIVE})"


def comparisons(doc: Doc, runs: dict[str, ExerciseRuns]):
    doc.h(2, "Differences between variants")
    doc.p("Unadjusted, descriptive: these intervals are outside the claims table's family and are no verdict; a "
          "difference the lessons claim is judged in the claims table. Each variant against its exercise's "
          "reference: the variant whose training time is the budget, else the one that changes nothing (the "
          "exercise's base model), else the first listed. The difference is variant − reference of the per-seed "
          "means, with a 95% t-interval over seeds: paired (over the per-seed differences) where both were run with "
          "the same seeds, Welch's where not. The exercise that trains nothing (it samples another's models) is "
          "compared on word validity; the no-mask exercise also on the honest loss.")
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
                    rows.append({**row, "variant mean": numbers.mean_std(a), "reference mean": numbers.mean_std(b),
                                 DIFFERENCE: "-", "seeds": f"{len(a)} vs {len(b)}",
                                 "reading": f"not run: {v if not a else ref}"})
                    continue
                pa, pb = er.per_seed(v, key) or {}, er.per_seed(ref, key) or {}
                same = sorted(pa) == sorted(pb)   # the same seeds see the same batches: pair them
                d = stats.paired([pa[s] for s in sorted(pa)], [pb[s] for s in sorted(pb)]) if same else \
                    stats.welch(a, b)
                rows.append({**row, "variant mean": numbers.mean_std(a), "reference mean": numbers.mean_std(b),
                             DIFFERENCE: numbers.interval(d), "method": d.method,
                             "seeds": f"{d.n_a} vs {d.n_b}", "reading": numbers.reading(d, v)})
    if rows:
        doc.table(pd.DataFrame(rows), fold=f"Each variant against its exercise's reference ({len(rows)} differences)")
    else:
        doc.p("No exercise has two variants to compare in this store.")


def failures(doc: Doc, runs: dict[str, ExerciseRuns]):
    doc.h(2, "Failed and unfinished runs")
    rows = []
    shown = ["run_id", "status", "variant", "seed", "superseded", "tags.mlflow.runName", "tags.failure_reason",
             "tags.diverged"]
    for name, er in runs.items():
        for r in er.others[[c for c in shown if c in er.others]].to_dict("records"):  # not every metric's column
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


def head_statistics(doc: Doc, runs: dict[str, ExerciseRuns], heads_by_run: dict):
    doc.h(2, "Head statistics")
    doc.p("Measured at the end of each run on validation windows (heads.csv). Blocks and heads are numbered from "
          "1, as in the lessons.")
    doc.p(TL_CONVENTION)
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
                         **{f"{st.label}: {how}": (_pct if st.percent else _num)(mean.get(st.metric_name(how)))
                            for st in STATISTICS for how in st.aggregate},
                         "seeds": len(tables)})
    if rows:
        doc.p("Per variant, the best head's score (max over heads) or the mean over heads, then the mean over "
              "seeds; the strongest previous-token head is the lowest seed's (of those with a heads.csv).")
        doc.table(pd.DataFrame(rows), fold="Each variant's head statistics")


def _num(x) -> str:
    return "-" if x is None or pd.isna(x) else f"{x:.2f}"


def _pct(x) -> str:
    return "-" if x is None or pd.isna(x) else f"{x:.0%}"


def reads(er: ExerciseRuns, parts: list[SectionKind]) -> tuple[list, list]:
    """Everything the report reads of an exercise's finished runs beyond search_runs, as (run id, key) histories
    and (run id, path) artifacts: its pictures' (the entries of its `report:` block), its claims' curves at a step,
    its head statistics and knock-outs, and the attention lines of the seeds the explorer shows. `make bench` reads
    exactly these for its bare read (analysis/report/bare_read.py)."""
    ids = er.finished["run_id"].tolist()
    histories = [(r, k) for r in ids for part in parts for k in part.histories()]
    for c in er.exercise.claims:
        for expr in filter(None, (c.check, c.ours)):
            for v, key, step in terms(tree(expr).body):
                if step is not None and v in er.variants:
                    histories += [(r, key) for r in er.rows(v)["run_id"]]
    artifacts = [(r, a) for r in ids for part in parts for a in part.artifacts()]
    if not er.exercise.init_from:  # an exercise that samples another's models has none of its own
        artifacts += [(r, a) for r in ids for a in ("heads.csv", "knockout.csv")]
        artifacts += [(r, "attention_lines.json") for r in attention_view.shown(er)]
    return list(dict.fromkeys(histories)), list(dict.fromkeys(artifacts))


def prefetch(er: ExerciseRuns, parts: list[SectionKind]) -> dict[str, pd.DataFrame]:
    """What the report reads of an exercise (reads), fetched side by side; returns the runs' heads.csv tables, by
    run id."""
    er.reader.prefetch(*reads(er, parts))
    with_heads = [] if er.exercise.init_from else er.finished["run_id"].tolist()
    paths = {r: er.reader.artifact(r, "heads.csv") for r in with_heads}
    return {r: pd.read_csv(path) for r, path in paths.items() if path}


# --- the whole report ------------------------------------------------------------------------------------
def build(runs: dict[str, ExerciseRuns], opts: ReportOptions, uri: str, out: Path, title: str,
          family: dict[str, exercises.Exercise] | None = None, sources: dict[str, ExerciseRuns] | None = None) \
        -> tuple[Doc, verdicts.Table]:
    """The first screen (the verdict grid, the counts, what was not reproduced), then each exercise's section (its
    claims, then its pictures as its `report:` block declares them, then its knock-out), the attention explorer,
    and after them the numbers behind it all (every claim's columns, the differences, perplexity, head statistics,
    the knock-out's method, where the runs ran, failures); the verdict table they all read: the claims of `runs`, their family counted over
    `family` (every exercise), reading `sources` too (other exercises their claims read)."""
    figs = out / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    for old in [*figs.glob("*.png"), *figs.glob("*.svg")]:
        old.unlink()
    doc = Doc(figs, opts.svg)
    # The exercises' pictures are written first, each exercise's as soon as its runs are read: the painter's workers
    # draw them while the rest is written. Written last, the figures would be the report's critical path, the
    # workers idle until the first.
    pictures, heads_by_run, knocked = {}, {}, []
    for name, er in runs.items():
        parts = sections.entries(er.exercise)
        heads_by_run.update(prefetch(er, parts))
        pictures[name] = doc.part()
        sections.render(Context(pictures[name], er, heads_by_run), parts)
        if knockout.exercise(pictures[name], er, heads_by_run):
            knocked.append(name)
    table = verdicts.table({**(sources or {}), **runs}, family, list(runs))
    doc.h(1, title)
    overview_line(doc, runs, opts, uri)
    verdict_grid.section(doc, table, {name: er.exercise.title for name, er in runs.items()})
    doc.toc()
    for name, er in runs.items():
        doc.h(2, er.exercise.title, anchor=verdict_grid.section_anchor(name))
        exercise_claims(doc, table, name)
        doc.extend(pictures[name])
    attention_view.section(doc, runs)
    doc.h(2, "The numbers behind the verdicts")
    doc.p("What the sections above rest on: every claim with every column, the differences between variants, each "
          "variant's loss and perplexity, the head statistics, how the knock-out is measured, where the runs ran "
          "and which runs failed.")
    claim_table(doc, table)
    comparisons(doc, runs)
    perplexity(doc, runs)
    head_statistics(doc, runs, heads_by_run)
    knockout.method(doc, runs, knocked)
    doc.h(2, "The runs")
    overview(doc, runs, opts, uri)
    environments.section(doc, runs)
    failures(doc, runs)
    return doc, table


def store_exercises(reader: Reader, quick: bool, files: dict) -> dict[str, exercises.Exercise]:
    """Exercises that exist only in the store: an experiment whose parent run carries exercise.yaml (a sweep
    records itself so). Named after the experiment, less the quick suite's prefix; a file of that name wins."""
    found = {}
    for experiment, text in reader.exercise_files(quick, skip={experiment_name(name, quick) for name in files}).items():
        name = experiment.removeprefix(QUICK_PREFIX) if quick else experiment
        try:
            ex = exercises.parse(name, text, f"{experiment}: exercise.yaml")
            sections.entries(ex)
        except ConfigError as e:
            print(f"warning: skipped: {e}", file=sys.stderr)
            continue
        found[name] = ex
    return found


def log_report(reader: Reader, out: Path, opts: ReportOptions, counts: dict) -> str:
    """One run per report in the experiment `report` (or `quick/report`): the files and the verdict counts."""
    name = experiment_name("report", opts.quick)
    client = reader.client
    exp = client.get_experiment_by_name(name)
    if exp is None:
        db = sqlite_file(reader.uri)  # beside the database, as the training runs' artifacts are
        location = (db.parent / "artifacts" / name.replace("/", "-")).as_uri() if db else None
        exp_id = client.create_experiment(name, artifact_location=location, tags=EXPERIMENT_KIND)
    else:
        exp_id = exp.experiment_id
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(exp_id)
    run = client.create_run(exp_id, run_name=f"report {datetime.now():%Y-%m-%d %H:%M}",
                            tags={"ablations": opts.ablations, "quick": str(opts.quick).lower()})
    for k in claims.VERDICTS:  # every kind, a zero included: a report's counts compare across runs
        client.log_metric(run.info.run_id, f"claims_{k.replace(' ', '_')}", counts.get(k, 0))
    for file in ("report.html", "report.md"):  # only what this report wrote, whatever else is in `out`
        client.log_artifact(run.info.run_id, str(out / file))
    client.log_artifacts(run.info.run_id, str(out / "figures"), "figures")
    client.set_terminated(run.info.run_id, "FINISHED")
    return run.info.run_id


class Opened(NamedTuple):
    """What a report reads: its options, the store, each chosen exercise's runs, every exercise the family is
    counted over (the files and the store's own), and the runs of other exercises the chosen claims read."""
    opts: ReportOptions
    reader: Reader
    runs: dict[str, ExerciseRuns]
    known: dict[str, exercises.Exercise]
    sources: dict[str, ExerciseRuns]


def open_runs(argv: list[str], drawing: painter.Painter | None = None) -> Opened | int:
    """The options checked, the store opened and each chosen exercise's runs found (search_runs); or the exit status
    after one line of error: 2 a bad option, 1 nothing to report. The painter `drawing`, if given, is started once an
    exercise has a finished run, so its workers import matplotlib and seaborn while the others' runs are searched."""
    try:
        opts = parse(argv)
        files = exercises.load_all()
        for ex in files.values():  # a kind or an option that does not exist: one line before anything is read
            sections.entries(ex)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    uri = resolve_uri(opts.tracking_uri)
    try:
        reader = Reader(uri)
        known = {**store_exercises(reader, opts.quick, files), **files}
        runs = {}
        for ex in exercises.select(opts.ablations, known):
            runs[ex.name] = ExerciseRuns(ex, experiment_name(ex.name, opts.quick), reader)
            if drawing is not None and len(runs[ex.name].finished):  # a store with nothing to draw starts none
                drawing.start()
        # the other exercises: what the chosen claims read of them, and their variants, which each metric's seeds'
        # variance is pooled over (analysis/verdicts/variance.py) as in the full report
        sources = {name: ExerciseRuns(known[name], experiment_name(name, opts.quick), reader)
                   for name in set(known) - set(runs)}
        if not any(len(er.finished) or len(er.others) for er in runs.values()):
            raise StoreError(f"no runs of the {'quick ' if opts.quick else ''}exercises in {redact(uri)} (experiments "
                             f"{experiment_name('<exercise>', opts.quick)}); run "
                             f"`make ablations{'-quick' if opts.quick else ''}` first")
    except ConfigError as e:  # a name neither a file nor the store holds
        print(f"error: {e}", file=sys.stderr)
        return 2
    except StoreError as e:
        try:  # a name no file holds is a bad option whatever the store
            exercises.select(opts.ablations, files)
        except ConfigError as bad:
            e = bad
        print(f"error: {e}", file=sys.stderr)
        return 2 if isinstance(e, ConfigError) else 1
    return Opened(opts, reader, runs, known, sources)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    started = time.time()
    opened = open_runs(argv, painter.PAINTER)
    if isinstance(opened, int):
        return opened
    opts, reader, runs, known, sources = opened
    uri = reader.uri
    out = Path(opts.out)
    title = "tinygpt ablations: the lessons' exercises, reproduced" + (" (quick suite)" if opts.quick else "")
    doc, table = build(runs, opts, uri, out, title, known, sources)
    (out / "report.md").write_text(doc.markdown(), encoding="utf-8")
    (out / "report.html").write_text(doc.html(title), encoding="utf-8")
    pages = docs_pages.write(Path(opts.docs), table, runs, uri, opts.quick) if opts.docs else []
    run_id = log_report(reader, out, opts, table.counts()) if opts.log else None
    if opts.log:  # each exercise's verdicts and figures, on its parent run
        parent_runs.log(runs, table, out / "figures")
    logged = f"; logged as run {run_id} in experiment '{experiment_name('report', opts.quick)}'" if run_id else ""
    print(f"wrote {out / 'report.html'} and {out / 'report.md'}{''.join(f', {p}' for p in pages)} in "
          f"{time.time() - started:.1f} s{logged}")
    print(f"claims: {verdict_text.summary(table)}")
    return 0
