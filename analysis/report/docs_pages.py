"""docs/lesson-claims.md and docs/results.md, generated, never written by hand.

    lesson-claims.md  every claim of experiments/*.yaml, from the YAML alone: by lesson, the lesson's words verbatim
                      and the check our runs are held to; ours (`source: ours`) apart, each with why it is ours.
                      `python -m analysis.report.docs_pages` writes it (no store needed), and
                      tests/analysis/test_docs_pages.py fails when the checked-in page differs from the YAML's.
    results.md        a run's verdicts, from the report's own table: its store (by its path from the checkout, or
                      its folder and kind: no path of the machine that wrote it), date and machine, the counts (the
                      lessons' and ours apart), each claim not reproduced and why, every claim's verdict, each
                      exercise's runs, seeds and times. `make report ARGS="docs=docs"` after a full `make ablations`
                      writes it, and lesson-claims.md beside it.

The counts are outcomes.counts', the lines on claims not reproduced verdict_grid.why's: the report's first screen and
these pages say the same thing from one computation.
"""
import re
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from analysis import verdicts
from analysis.report import environments, numbers, outcomes, verdict_grid, verdict_text
from analysis.store_reading.reader import ExerciseRuns
from analysis.verdicts import claim_kinds
from analysis.verdicts.decision import Outcome
from lm.settings import exercises
from lm.settings.claims import Claim, Source
from lm.settings.exercises import Exercise
from lm.tracking.store_check import shown

COMMAND = 'make report ARGS="docs=docs"'
CLAIMS_COMMAND = "python -m analysis.report.docs_pages"
DOCS = Path(__file__).resolve().parents[2] / "docs"


# The lessons' sentences that no run here can check: (lesson, its words verbatim, why). tests/suite/test_quotes.py
# checks the words against the lessons as it checks the claims'; where ours is shown beside the lesson's figure,
# the reason names the claim that shows it.
NOT_CHECKABLE = (
    ("000", "After 3,000 steps of Adam, about 13 minutes here",
     "another machine's timing, of the lesson's numpy engine: ours trains in PyTorch on this machine. Ours is shown "
     "beside it, not judged: baseline's `base.train_time_s`"),
    ("000", "32 windows of 64 per step (about 0.27 s here)",
     "another machine's timing, of the lesson's numpy engine. Ours is shown beside it, not judged: baseline's "
     "`base.ms_per_step` (and scaling's times per step, whose estimates are ours)"),
    ("001", "Without it, the guess after “emm” could only see the last “m”.",
     "a model without attention, which neither the lesson nor this project builds. The guess after \"emm\" is "
     "logged (microgpt's probe.json), not judged; what reading more than the last letter is worth is microgpt's "
     "comparison with the names' bigram table, which sees only the last letter (ours)"),
    ("002", "step     1 | train 4.119 | val 4.121",
     "the validation loss after one step: our runs validate before the first step and every 250 steps, not after "
     "step 1. The train column at step 1 is checked (recipe002's \"Training loss after the first step\")"),
    ("002", "It runs on a CPU with small settings (about 3 minutes of training).",
     "another machine's CPU. Ours is shown beside it, not judged: recipe002's `cpu.train_time_s`"),
    ("002", "On an A100 or H100 you can train a model ten times bigger in the same time",
     "needs an A100 or H100: not checkable on a CPU machine. `make gpu-check` times the GPU settings where a GPU is "
     "lent (docs/gpu.md)"),
)


def lesson_of(text: str) -> str:
    """The lesson an exercise belongs to, from its `lesson:` description ("000, Go further: ..."): "000", or "none"."""
    found = re.match(r"\s*(\d{3})", text or "")
    return found[1] if found else "none"


def our_check(claim: Claim) -> str:
    """What our runs are held to, in the YAML's own terms: as the claim's kind says."""
    return claim_kinds.of(claim).asks(claim)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(columns: list[str], rows: list[list]) -> list[str]:
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns),
            *("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)]


def lesson_claims(found: dict[str, Exercise]) -> str:
    """docs/lesson-claims.md from the exercises' YAML alone: each lesson's claims (its words, verbatim, and our
    check), then ours, each with why."""
    lines = [f"*Written by `{CLAIMS_COMMAND}` from `experiments/*.yaml`; do not edit by hand: change the YAML and run "
             f"it again (`tests/analysis/test_docs_pages.py` fails until the page matches the YAML).*", "",
             "# The lessons' claims: where each is checked", "",
             "Every claim of `experiments/*.yaml`, numbered as in its exercise's section of the report: the lesson's "
             "words (verbatim; `tests/suite/test_quotes.py` checks each against the lessons) and the check our runs "
             "are held to. Thresholds come from the lesson's text; where the lesson gives none, the YAML's comment "
             "says \"project choice\" and why. Claims that are our own inference (`source: ours`) are listed apart, "
             "each with why, and counted apart. How a verdict is reached: [claims.md](claims.md); the verdicts of "
             "the last full run: [results.md](results.md).", ""]
    by_lesson: dict[str, list] = {}
    ours = []
    for name, ex in found.items():
        for index, claim in enumerate(ex.claims, start=1):
            if claim.source == Source.OURS:
                ours.append([name, index, claim.text, claim.why or "-", our_check(claim)])
            else:
                by_lesson.setdefault(lesson_of(ex.lesson), []).append(
                    [name, index, claim.text, f"“{claim.lesson}”" if claim.lesson else "-",
                     our_check(claim)])
    counted = sum(map(len, by_lesson.values()))
    lines += [f"**The lessons' claims**: {counted}; **ours**: {len(ours)}.", ""]
    for lesson in sorted(by_lesson):
        lines += [f"## Lesson {lesson}" if lesson != "none" else "## No lesson", "",
                  *_table(["exercise", "#", "claim", "the lesson's words", "our check"], by_lesson[lesson]), ""]
    lines += ["## Ours", "", "Inferences of ours from the lessons, or comparisons no lesson makes: judged like the "
              "lessons' claims, counted apart.", ""]
    lines += _table(["exercise", "#", "claim", "why it is ours", "our check"], ours) if ours else ["None."]
    lines += ["", "## Not checkable here", "", f"The lessons' sentences that no run here can check ("
              f"{len(NOT_CHECKABLE)}), each with why: another machine's timing, or a model no one builds. Not "
              f"counted among the claims.", "",
              *_table(["lesson", "the lesson's words", "why not here"],
                      [[lesson, f"“{words}”", why] for lesson, words, why in NOT_CHECKABLE])]
    return "\n".join(lines) + "\n"


def _first_line(store: str, quick: bool) -> str:
    which = "the quick suite's runs" if quick else "the last full run"
    return (f"*Written by `{COMMAND}` from {which} in {store}; do not edit by hand: run the suite and `{COMMAND}` "
            f"again.*")


def results(table: verdicts.Table, runs: dict[str, ExerciseRuns], store: str, quick: bool) -> str:
    """docs/results.md: the run, the counts, what was not reproduced and why, and each exercise's runs and times."""
    finished = pd.concat([er.finished.assign(exercise=name) for name, er in runs.items() if len(er.finished)],
                         ignore_index=True)
    env = environments.table(runs)
    machine = "; ".join(sorted({f"{r['env.device']}, {r['env.threads']} thread(s) a run, torch {r['env.torch']}"
                                for r in env.dropna(subset=["env.device"]).to_dict("records")})) or "not recorded"
    ended = pd.to_datetime(finished["end_time"]).max() if len(finished) else None
    counts = outcomes.counts(table)
    lines = [_first_line(store, quick), "", "# The last full run" if not quick else "# The quick suite's run", "",
             f"- **Store**: {store}, {len(finished)} finished runs of {len(runs)} exercises.",
             f"- **Date**: the last run ended {ended:%Y-%m-%d %H:%M} UTC." if ended is not None else
             "- **Date**: no finished run.",
             f"- **Machine**: {machine}.", "",
             "## The counts", "",
             f"- **The lessons' claims** ({sum(counts[Source.LESSON].values())}): "
             f"{outcomes.summary(counts[Source.LESSON])}.",
             f"- **Ours** ({sum(counts[Source.OURS].values())}): {outcomes.summary(counts[Source.OURS])}.", "",
             "## Not reproduced, and why", ""]
    failed = [r for r in table.rows if outcomes.outcome(r) == Outcome.NOT_REPRODUCED and r.counted]
    lines += [f"- {r.exercise} #{r.index}, *{r.verdict.text}*{' (ours)' if r.claim.source == Source.OURS else ''}: "
              f"{verdict_grid.why(r)}" for r in failed] or ["None."]
    lines += ["", "## Every claim's verdict", "",
              "Each claim's words and check: [lesson-claims.md](lesson-claims.md), by exercise and number.", "",
              *_table(["exercise", "#", "claim", "ours", "margin (interval)", "seeds", "verdict"],
                      [[r.exercise, r.index, r.verdict.text + (" (ours)" if r.claim.source == Source.OURS else ""),
                        numbers.ours(r.verdict.ours) or "-", verdict_text.interval(r.verdict) or "-",
                        verdict_text.seeds(r.verdict) or "-", verdict_text.label(r.verdict) or "-"]
                       for r in table.rows])]
    lines += ["", "## Each exercise", "",
              "Training seconds: the sum over its finished runs of each run's own training time (validation left "
              "out; a copied run counts the run it copies); wall: from its first run's start to its last run's end, "
              "other exercises' runs interleaved.", ""]
    rows = []
    for name, er in runs.items():
        f = er.finished
        seeds = f.groupby("variant")["seed"].nunique() if len(f) else pd.Series(dtype=int)
        train = pd.to_numeric(f.get("metrics.train_time_s", pd.Series(dtype=float)), errors="coerce").sum()
        wall = (pd.to_datetime(f["end_time"]).max() - pd.to_datetime(f["start_time"]).min()).total_seconds() \
            if len(f) else float("nan")
        rows.append([name, len(f), f"{seeds.min()}–{seeds.max()}" if len(seeds) and seeds.min() != seeds.max()
                     else (str(seeds.min()) if len(seeds) else "-"),
                     f"{train:,.0f} s" if train else "-", f"{wall / 60:.1f} min" if wall == wall else "-",
                     outcomes.summary(dict(sum((Counter(c) for c in outcomes.counts(table, name).values()),
                                               Counter())))])
    lines += _table(["exercise", "finished runs", "seeds a variant", "training seconds", "wall", "verdicts"], rows)
    return "\n".join(lines) + "\n"


def write(folder: Path, table: verdicts.Table, runs: dict[str, ExerciseRuns], uri: str, quick: bool) -> list[Path]:
    """Both pages into folder: lesson-claims.md from the YAML, results.md from the table; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    pages = {"lesson-claims.md": lesson_claims(exercises.load_all()),
             "results.md": results(table, runs, shown(uri), quick)}
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in pages]


def main(argv: list[str]) -> int:
    """docs/lesson-claims.md (or the folder given) from experiments/*.yaml."""
    folder = Path(argv[0]) if argv else DOCS
    if not folder.is_dir():
        print(f"error: {folder} is not a folder", file=sys.stderr)
        return 2
    path = folder / "lesson-claims.md"
    path.write_text(lesson_claims(exercises.load_all()), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
