"""A grid sweep from the command line (`python -m lm.commands.train -m ...`, `make sweep`): the whole grid checked,
then handed to the suite as an exercise of its own (lm/suite/sweep.py builds it)."""
import sys

from lm import process
from lm.settings.config import ConfigError
from lm.settings.errors import USER_ERRORS
from lm.suite import load_suite_config, plan, run
from lm.suite.sweep import ARTIFACT, exercise, expand, split, to_yaml


def main(argv: list[str], cfg: bool = False) -> int:
    """Checks the whole grid (every point's config composed and checked) before any work, then hands it to the
    suite. cfg: print the sweep's exercise.yaml and its runs instead."""
    name, own, grid = split(argv)
    if not any(a.split("=")[0] == "seeds" for a in own):
        own.insert(0, "seeds=1")  # a sweep is many `make train`s: one seed each unless asked
    try:
        swept, common, points = expand(grid)
        ex = exercise(name, swept, common, points)
        s = load_suite_config(own)
        s.exercises = [ex]
        jobs = plan(s).jobs
    except ConfigError as e:
        return process.fail(str(e))
    ex.overrides += s.overrides  # overrides=[...], which the suite gives every run, belong to the exercise too
    text = to_yaml(ex, jobs[0].cfg.train.steps, s.per_variant)
    if cfg:
        print(text + "# runs:\n" + "".join(f"#   {j.experiment}/{j.spec.name}\n" for j in jobs), end="")
        return 0
    print(f"sweep {ex.name}: {len(points)} points × {s.per_variant} seeds", flush=True)
    s.files = {ARTIFACT: text}
    try:
        return run(s).status
    except USER_ERRORS as e:
        return process.fail(str(e))

if __name__ == "__main__":
    process.finish(main(sys.argv[1:]))
