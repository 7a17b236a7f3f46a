"""`make report` on stores made by the quick suite: every section, partial and empty stores, and a real browser."""
import base64
import contextlib
import io
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from PIL import Image

from analysis import report, verdicts
from analysis.report import docs_pages, outcomes
from analysis.report import verdict_text as text
from analysis.store_reading.reader import ExerciseRuns, Reader
from analysis.verdicts import decision
from analysis.verdicts.decision import Outcome
from lm.settings.claims import Source
from lm.settings.exercises import load_all
from tests.analysis import report_browser

ROOT = Path(__file__).resolve().parents[2]
# The report's own sections, each exercise's (its file's title: a new exercise needs no change here) and the
# sections of the kinds and modules the lessons' exercises use.
SECTIONS = ["Validation loss and perplexity", "The lessons' claims", "Differences between variants",
            "Failed and unfinished runs", "Head statistics", "Which heads matter: knock-out", "Explore the attention",
            "Which change helps most for the same training time?", *(ex.title for ex in load_all().values())]
# Each exercise's figures, named <exercise>_<kind> after the entries of its report: block.
FIGURES = ["baseline_curves", "baseline_final", "baseline_attention", "baseline_two_heads", "temperature_sweep",
           "nomask_final", "nomask_curves", "scaling_final", "scaling_against_time", "context_by_position",
           "context_sweep", "heads_sweep", "heads_attention", "heads_heads", "nopos_final", "nopos_curves",
           "sqrtd_final", "sqrtd_curves", "sqrtd_curves2", "recipe002_curves", "recipe002_final", "bigram_curves", "microgpt_final",
           "nomask002_final", "nomask002_curves", "nopos002_final", "nopos002_curves", "scaling002_final",
           "scaling002_curves", "aa_final",
           # bigram: a context of 1 has no heads to knock out; nomask and nomask002: nothing of theirs reads a
           # knock-out, so a suite's run does not measure one (lm/suite/measuring.py)
           *(f"{name}_knockout" for name in ("baseline", "nopos", "scaling", "context", "heads", "microgpt", "sqrtd",
                                             "recipe002", "aa", "nopos002", "scaling002"))]


def uri(folder) -> str:
    return f"sqlite:///{folder}/mlflow.db"


def make(store_folder, out, *args) -> tuple[int, str, str]:
    """The report in-process, as `make report` runs it, with what it printed."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = report.main([f"tracking_uri={uri(store_folder)}", f"out={out}", *args])
    return rc, stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="module")
def quick_report(quick_store, tmp_path_factory):
    """The quick store's report, and with it the generated docs pages (in out/docs)."""
    out = tmp_path_factory.mktemp("report")
    rc, stdout, stderr = make(quick_store, out, "quick=true", f"docs={out / 'docs'}")
    assert rc == 0, stderr
    return out, stdout


def drawn(png: Path) -> int:
    """The pixels of a figure in a strong colour: its data and marks. An empty panel, its grid, ticks and titles has
    none (0 measured), the least drawn of the quick report's figures, nopos_final, 405 (2026-12-03)."""
    hsv = np.asarray(Image.open(png).convert("RGB").convert("HSV"))
    return int(((hsv[..., 1] > 100) & (hsv[..., 2] > 60)).sum())


def test_every_section_and_figure(quick_report):
    out, stdout = quick_report
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for title in SECTIONS:
        assert re.search(rf"^#+ {re.escape(title)}$", md, re.M), title
    for name in FIGURES:
        assert drawn(out / "figures" / f"{name}.png") > 100, name
        assert f"figures/{name}.png" in md
    assert html.count("<img src='data:image/png;base64,") == len(list((out / "figures").glob("*.png")))
    assert "figures/" not in re.sub(r"<figcaption>.*?</figcaption>", "", html)  # nothing the HTML must fetch
    assert "wrote" in stdout and "quick/report" in stdout


def test_tables_hold_the_numbers(quick_report):
    md = (quick_report[0] / "report.md").read_text()
    assert "| - | uniform guess (shakespeare) | - | - | 4.174 | 65.00 | - |" in md
    assert re.search(r"\| baseline \| base \| \(as the exercise's base\) \| 20 \| \d\.\d{3} \| [\d.]+ \| 1 \|", md)
    # The quick suite logs no step 500, so the curve's claims are not run; one seed makes every other verdict
    # indicative. Columns: claim, the lessons' figure, ours, the margin's 95% interval, its method, seeds, p, the
    # adjusted p, verdict, note.
    assert re.search(r"\| Validation loss after 500 steps \| 2\.090 \| - \| - \| - \| - \| - \| - \| not run \|", md)
    # A deterministic check: judged on its numbers, with no error to control, one seed as well as three.
    assert re.search(r"\| The model has this many parameters \| The model has two blocks and 112,193 knobs \| 112,193 \| "
                     r"base\.n_params == 112193: holds \| deterministic \| 1 \| - \| - \| reproduced \| a deterministic check", md)
    assert re.search(r"\| Finding: which change helps most for the same training time\? \| Which change helps most for "
                     r"the same training time\? \| \w+ "
                     r"\(val_loss_at_budget \d\.\d{3}\), runner-up \w+ \(\d\.\d{3}\) \| [+-]\d\.\d{3} \| one seed \| 1 \| "
                     r"- \| - \| finding: .* undetermined \(1 seed\) \|", md)
    # A lesson's single number on one seed: no prediction interval, indicative.
    assert re.search(r"\| The untrained model's validation loss \| 4\.644 at the start \(random knobs\) \| \d\.\d{3} \| - \| "
                     r"prediction interval \| 1 \| "
                     r"- \| - \| indicative \(1 seed\) \|", md)
    assert re.search(r"\| heads \| Finding: four heads against one head of the same width, validation loss \| .* \| [+-]\d\.\d{3} \| "
                     r"one seed \| 1 \|", md)
    assert text.GUARANTEE in md and "Benjamini-Hochberg" in md
    # The A/A control: identical settings through every path a claim can take, its comparisons in a family of their
    # own, and how many came out firm beside the rate the calibration measured.
    assert re.search(r"\| aa \| A/A: the same settings on disjoint seeds, .* \| Welch t, paired t, prediction interval \| "
                     r"3 \| [\d.e-]+; [\d.e-]+; [\d.e-]+ \| [\d.e-]+; [\d.e-]+; [\d.e-]+ \| finding: A/A control: [0-3] of 3 "
                     r"comparisons firm \|", md)
    assert re.search(r"The A/A control \(experiments/aa\.yaml: .*\): [0-4] of 4 comparisons firm, 4 of them judged", md)
    aa = md.split("## A/A: identical settings through every path a claim can take\n")[1].split("\n## ")[0]
    assert "| a | 1, 2, 3 |" in aa and "| b | 1001, 1002, 1003 |" in aa and "Shapiro" not in md
    assert "one seed: no interval" in md
    # The lessons' claims issue 23 added each get a verdict, none an error; the position-free head's invariance is
    # structural, so even 20 steps hold it, on one seed an indicative reading.
    assert "could not be evaluated" not in md
    # nothing "not logged" but the curve's steps, which 20 steps never reach
    assert not [ln for ln in md.splitlines() if "was not logged" in ln and "val_loss[" not in ln]
    assert re.search(r"\| nopos \| Without position vectors, shuffling the earlier characters leaves block 1's "
                     r"weighted average unchanged \| .* \| one seed \| 1 \| - \| - \| indicative \(1 seed\) \| "
                     r"[^|]*the means hold", md)   # one seed: the means' direction, no verdict (issue 23)
    assert "None: every run in the store finished." in md
    # Head statistics: the convention, the numbering, and lesson 000's lines for every baseline head.
    assert "TransformerLens" in md and "numbered from 1" in md
    assert len(re.findall(r"^- block [12], head [1-4]: .* at \d+% of positions", md, re.M)) == 8
    assert "| heads | h1 | 3 × 1 |" in md and "| scaling | depth4 | 4 × 4 |" in md   # heads: lesson 002's 3 blocks
    # Samples: three temperatures, the base model's, microgpt's names; the scaling answer in words.
    assert all(f"### Temperature {t} " in md for t in ("0.5", "1.0", "1.5"))
    assert "### microgpt's names" in md and "JULIET:" in md
    assert re.search(r"With the base model's training time as the budget \([\d.]+ s", md)


def test_the_report_is_a_run_in_mlflow(quick_report, quick_store):
    client = MlflowClient(uri(quick_store))
    exp = client.get_experiment_by_name("quick/report")
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"   # as every experiment the project makes
    run = client.search_runs([exp.experiment_id], order_by=["attributes.start_time DESC"])[0]
    assert run.info.status == "FINISHED"
    files = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"report.html", "report.md", "figures"} <= files
    assert len(client.list_artifacts(run.info.run_id, "figures")) == len(FIGURES)
    assert "claims_reproduced" in run.data.metrics


def test_a_store_with_one_run(store_copy, tmp_path):
    folder, client = store_copy
    for exp in client.search_experiments():
        if exp.name != "quick/baseline":
            client.delete_experiment(exp.experiment_id)
    rc, _, stderr = make(folder, tmp_path / "out", "quick=true", "log=false")
    assert rc == 0, stderr
    md = (tmp_path / "out" / "report.md").read_text()
    for title in SECTIONS:
        assert re.search(rf"^#+ {re.escape(title)}$", md, re.M) or title.startswith("Which"), title
    assert "Not run: the temperature exercise has no finished run in this store." in md
    assert re.search(r"\| heads \| h1 \| model.n_head=1 \| - \| not run \| not run \| 0 \|", md)
    assert re.search(r"\| nopos \| Without position vectors the validation loss is worse \| .* \| - \| not run \|", md)
    assert sorted(p.name for p in (tmp_path / "out" / "figures").iterdir()) == \
        ["baseline_attention.png", "baseline_curves.png", "baseline_final.png", "baseline_knockout.png",
         "baseline_two_heads.png"]


def add_run(client, experiment: str, variant: str, seed: int, status: str, metrics=None, tags=None) -> str:
    exp = client.get_experiment_by_name(experiment)
    parent = client.search_runs([exp.experiment_id], "tags.role = 'exercise'")[0].info.run_id
    run = client.create_run(exp.experiment_id, run_name=f"{variant}/seed{seed}", tags={
        "variant": variant, "seed": str(seed), "ablation": experiment.split("/")[-1], "mlflow.parentRunId": parent,
        **(tags or {})})
    for k, v in (metrics or {}).items():
        client.log_metric(run.info.run_id, k, v, step=20)
    client.set_terminated(run.info.run_id, status)
    return run.info.run_id


def test_failed_runs_are_shown_and_the_newest_finished_run_counts(store_copy, tmp_path):
    folder, client = store_copy
    add_run(client, "quick/nopos", "nopos", 2, "FAILED",
            tags={"failure_reason": "loss became NaN at step 7", "diverged": "true"})
    add_run(client, "quick/nopos", "pos", 1, "FAILED", tags={"failure_reason": "RuntimeError: boom"})
    # A newer finished run of the same (variant, seed), as after a config change: it replaces the old one.
    add_run(client, "quick/nopos", "nopos", 1, "FINISHED", metrics={"val_loss": 1.2345, "val_perplexity": 3.437})
    rc, _, stderr = make(folder, tmp_path / "out", "quick=true", "ablations=[nopos]", "log=false")
    assert rc == 0, stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert re.search(r"\| nopos \| nopos/seed2 \| \w+ \| FAILED \| loss became NaN at step 7 \| yes \| no \|", md)
    assert re.search(r"\| nopos \| pos/seed1 \| \w+ \| FAILED \| RuntimeError: boom \| no \| yes \|", md)
    assert "| nopos | nopos | model.pos_emb=false | - | 1.234 | 3.44 | 1 |" in md
    assert "| nopos | quick/nopos | No position vectors (lesson 000) | 2 of 2 | 2 | 1 | 1 |" in md   # one failed run left


def test_runs_that_logged_almost_nothing(store_copy, tmp_path):
    """Every exercise with a finished run holding one number, no params, no histories and no files: the report
    says what is missing instead of failing."""
    folder, client = store_copy
    for name, ex in load_all().items():
        exp_id = client.create_experiment(name)  # the full suite's names: the copy holds only quick/ ones
        client.create_run(exp_id, run_name=name, tags={"role": "exercise"})
        for variant in ex.variants:
            add_run(client, name, variant, 1, "FINISHED", metrics={"val_loss": 2.5})
    rc, _, stderr = make(folder, tmp_path / "out", "log=false")
    assert rc == 0, stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert "| nopos | nopos | model.pos_emb=false | - | 2.500 | 12.18 | 1 |" in md
    assert re.search(r"\| The model has this many parameters \| The model has two blocks and 112,193 knobs \| - \| - \| - "
                     r"\| - \| - \| - \| not run \|", md)
    # Only the validation curves and the final values that show val_loss have anything to draw: one point each.
    assert sorted(p.name for p in (tmp_path / "out" / "figures").iterdir()) == [
        "aa_final.png", "baseline_curves.png", "bigram_curves.png", "microgpt_final.png", "nopos002_curves.png",
        "nopos002_final.png", "nopos_curves.png", "nopos_final.png", "recipe002_curves.png", "scaling002_curves.png",
        "scaling002_final.png", "scaling_final.png", "sqrtd_curves.png", "sqrtd_final.png"]


def test_an_empty_store_is_one_line(quick_store, tmp_path):
    rc, stdout, stderr = make(tmp_path / "none", tmp_path / "out", "quick=true")
    assert rc == 1 and stdout == ""
    assert stderr.startswith("error: no MLflow store at ") and stderr.count("\n") == 1
    assert not (tmp_path / "none").exists()  # reading never creates a store
    # The quick store holds none of the full suite's experiments.
    rc, stdout, stderr = make(quick_store, tmp_path / "out")
    assert rc == 1 and stdout == ""
    assert stderr.startswith("error: no runs of the exercises in ") and stderr.count("\n") == 1
    assert "make ablations" in stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, message", [
    (["colour=red"], "unknown option 'colour=red'"),
    (["quik=true"], "unknown option 'quik=true': did you mean quick=true?"),
    (["quick=maybe"], "quick='maybe' is not true or false: quick=true or quick=false"),
    (["quick=ture"], "quick='ture' is not true or false: did you mean quick=true?"),
    (["ablations=[baseline,nosuch]"], "unknown ablation 'nosuch'"),
])
def test_bad_options_are_one_line(args, message, tmp_path):
    rc, stdout, stderr = make(tmp_path, tmp_path / "out", *args)
    assert rc == 2 and stdout == ""
    assert stderr.startswith(f"error: {message}") and stderr.count("\n") == 1


# --- a real browser: the command-line Chromium the other report tests drive (test_attention_view, test_own_exercise)
CHECK = """<script>
window.addEventListener("load", () => {
  const imgs = [...document.images];
  document.body.dataset.images = imgs.length;
  document.body.dataset.broken = imgs.filter(i => !i.complete || i.naturalWidth === 0).length;
  document.body.dataset.tables = document.querySelectorAll("table").length;
});
</script>"""


def chromium() -> str | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found and os.environ.get("TINYGPT_REQUIRE_BROWSER") == "1":
        pytest.fail("chromium is not installed, and TINYGPT_REQUIRE_BROWSER=1 requires the browser tests")
    if not found:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def browse(exe: str, page: Path, tmp_path: Path, *args: str) -> str:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", *args, page.as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


# --- as a person sees it ---------------------------------------------------------------------------------------
def quick_table(quick_store) -> verdicts.Table:
    """The verdict table of the quick store, built here from the store's runs as the report builds it."""
    reader = Reader(uri(quick_store))
    return verdicts.table({name: ExerciseRuns(ex, f"quick/{name}", reader) for name, ex in load_all().items()})


def test_the_first_screen_shows_every_verdict_and_the_page_fits(quick_report, quick_store):
    """The report in Chromium at 1600 × 1000 on a fresh profile: the verdict grid, a cell per claim of the table in
    its outcome's colour and linking to the claim's row, and the counts fit the first screen; the page does not
    scroll sideways, no Markdown mark is left as text, every figure is embedded, decoded and shown at its own size."""
    html_path = quick_report[0] / "report.html"
    srcs = re.findall(r"<img src='([^']*)'", html_path.read_text())
    assert len(srcs) == len(FIGURES)
    for src in srcs:   # every image an embedded PNG: the page fetches nothing
        head, _, data = src.partition(",")
        assert head == "data:image/png;base64" and base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n")
    seen = report_browser.look(html_path, report_browser.SCREENS)
    screen = seen.viewport
    assert seen.grid["top"] >= 0 and seen.grid["bottom"] <= screen["height"], seen.grid
    assert seen.grid["right"] <= screen["width"] and seen.counts["bottom"] <= screen["height"], seen.counts
    table = quick_table(quick_store)
    assert seen.cells == len(table.rows) and seen.broken_links == 0
    assert seen.cell_classes == [f"v-{outcomes.slug(outcomes.outcome(r))}{' ours' * (r.claim.source == Source.OURS)}"
                                 for r in table.rows]
    assert seen.page["width"] <= screen["width"], seen.page   # no sideways scroll
    assert seen.backticks == 0 and seen.markdown == 0
    assert seen.broken_images == 0 and len(seen.figures) == len(FIGURES)
    too_wide = [f for f in seen.figures if f["natural"] > f["room"]]
    assert not too_wide, too_wide   # each figure drawn to fit, so none is shrunk
    assert (report_browser.SCREENS / "report.png").read_bytes().startswith(b"\x89PNG")


def test_each_exercise_opens_with_its_claims_then_its_pictures(quick_report):
    html = (quick_report[0] / "report.html").read_text()
    for name, ex in load_all().items():
        section = html.split(f"<h2 id='ex-{name}'>")[1].split("<h2 ")[0]
        first_table, first_figure = section.find("<table>"), section.find("<figure>")
        assert ex.claims and f"id='claim-{name}-1'" in section[:first_figure if first_figure >= 0 else None], name
        assert first_figure < 0 or first_table < first_figure, name
    # the knock-out of an exercise is in its section, and its method after every exercise
    assert html.index("id='knockout-heads'") < html.index("<h2 id='ex-microgpt'>")
    assert html.index("<h2 id='knockout'>") > max(html.index(f"<h2 id='ex-{n}'>") for n in load_all())


def test_the_docs_pages_are_the_reports_table(quick_report, quick_store):
    """`make report ARGS="docs=..."` writes docs/results.md from the report's own table (every claim's verdict, the
    counts as the table's rows give them, one line per claim not reproduced) and lesson-claims.md from the YAML."""
    docs = quick_report[0] / "docs"
    claims_page, results_page = (docs / "lesson-claims.md").read_text(), (docs / "results.md").read_text()
    assert claims_page == docs_pages.lesson_claims(load_all())
    assert results_page.startswith('*Written by `make report ARGS="docs=docs"` from the quick suite\'s runs')
    table, exercises = quick_table(quick_store), load_all()
    for r in table.rows:
        line = next(ln for ln in results_page.splitlines() if ln.startswith(f"| {r.exercise} | {r.index} |"))
        assert line.rstrip().endswith(f"| {text.label(r.verdict) or '-'} |"), line
    for source, name in ((Source.LESSON, "The lessons' claims"), (Source.OURS, "Ours")):
        rows = [r for r in table.rows if r.claim.source == source and r.counted]
        words = ", ".join(f"{n} {k}" for k, n in Counter(str(r.verdict.verdict) for r in rows).items())
        counted = re.search(rf"\*\*{name}\*\* \((\d+)\): (.*)\.", results_page)
        assert int(counted[1]) == len(rows) and sorted(counted[2].split(", ")) == sorted(words.split(", "))
    failed = [r for r in table.rows if r.verdict.verdict == Outcome.NOT_REPRODUCED and r.counted]
    listed = results_page.split("## Not reproduced, and why\n\n")[1].split("\n\n")[0]
    assert listed == "None." if not failed else len(listed.splitlines()) == len(failed)
    for name in exercises:
        assert re.search(rf"^\| {name} \| [1-9]\d* \| [1-9][\d–]* \| ", results_page, re.M), name
    assert "**Machine**: " in results_page and "not recorded" not in results_page
