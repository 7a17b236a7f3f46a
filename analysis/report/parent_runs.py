"""The report's findings on each exercise's parent run: its claims' verdicts as tags, its figures as images.

Called when the report is built and logged (`make report`), so a rebuilt report replaces what the last one left:
a tag `verdict.<n>` per claim ("reproduced: Four heads beat one head of the same width"), read from the report's
own verdict table (analysis.verdicts.table), a tag `verdicts` that counts them, and the exercise's figures (those the
report names `<exercise>*.png`) under the parent run's `figures/`, which MLflow's artifact view previews. The
per-variant means come from the suite (lm/tracking/aggregates.py).
"""
from pathlib import Path

from analysis import verdicts
from analysis.report import verdict_text


def parent_run(er) -> str | None:
    """The exercise's parent run (tag role=exercise) in its experiment, if the suite made one."""
    exp = er.reader.experiments.get(er.experiment)
    if exp is None:
        return None
    found = er.reader.client.search_runs([exp.experiment_id], "tags.role = 'exercise'", max_results=1)
    return found[0].info.run_id if found else None


def figures_of(name: str, figures: Path) -> list[Path]:
    return sorted(p for p in figures.glob("*.png") if p.stem == name or p.stem.startswith(f"{name}_"))


def log(runs: dict, table: verdicts.Table, figures: Path) -> dict[str, str]:
    """The table's verdicts and the figures onto every exercise's parent run; returns {exercise: parent run id}."""
    done = {}
    for name, er in runs.items():
        run_id = parent_run(er)
        if run_id is None:
            continue
        client = er.reader.client
        rows = table.of(name)
        tags = {f"verdict.{r.index}": f"{verdict_text.label(r.verdict)}: {r.verdict.text}"[:5000] for r in rows}
        tags["verdicts"] = verdict_text.summary(table, name)
        for key, value in tags.items():
            client.set_tag(run_id, key, value)
        for path in figures_of(name, figures):
            client.log_artifact(run_id, str(path), "figures")
        done[name] = run_id
    return done
