"""`make ablations`: every exercise's runs, several seeds each, tracked in MLflow, resumable and parallel.

    python -m lm.commands.suite [ablations=[nomask,heads]] [seeds=1] [quick=true] [workers=2] [train.lr=0.01 ...]
    python -m lm.commands.suite plan=true [...]     # the runs, which are done, and the time they will take

The suite itself is the library lm.suite (run, plan); this is its command line: the words into a SuiteSpec, then
the suite run (or, with --cfg, its config and its runs printed), and its result as the exit status.
"""
import dataclasses
import sys

from omegaconf import OmegaConf

from lm import process
from lm.settings import options
from lm.settings.errors import USER_ERRORS
from lm.suite import ExitStatus, load_suite_config, plan, run
from lm.suite.runner import NOT_STARTED
from lm.suite.settings import SuiteConfig
from lm.tracking import store_check


@dataclasses.dataclass
class PlanOption:
    plan: bool = False          # print the runs, which are done, which copy a twin, and the time; train nothing


HELP = """`make ablations`: every exercise's runs, several seeds each, tracked in MLflow, resumable and parallel.

usage: python -m lm.commands.suite [key=value ...] [--cfg]

The suite's options, each with its default, then any run's config key (train.lr=0.01), given to every run
(python -m lm.commands.train --help lists them). --cfg prints the suite's settings and its runs and trains nothing.

the suite's options:
"""


def main(argv: list[str] | None = None) -> int:
    """The exit status of the suite the words ask for, run (or, with --cfg, planned and printed)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if options.asks_help(argv):
        print(HELP + options.table(options.option_rows(SuiteConfig) + options.option_rows(PlanOption)))
        return ExitStatus.OK
    show = any(a in ("--cfg", "-c") for a in argv)  # print the suite's config and its runs; train nothing
    argv = [a for a in argv if a not in ("--cfg", "-c", "job", "all")] if show else argv
    asked = [a for a in argv if a.split("=")[0] == "plan"]   # the command's own: what the suite would do
    argv = [a for a in argv if a not in asked]
    try:
        try:
            planning = options.parse(PlanOption, asked).plan
            spec = load_suite_config(argv)
            if planning:
                from lm.suite import estimate   # MLflow's client, to read the store's runs and their times

                uri = store_check.resolve_uri(spec.tracking_uri)
                store_check.check_server(uri)
                print(estimate.text(estimate.estimate(plan(spec), estimate.read(uri)), store_check.redact(uri)))
                return ExitStatus.OK
            if show:
                runs = plan(spec).runs
                settings = OmegaConf.to_container(OmegaConf.structured(spec.settings()))
                print(store_check.redact(process.to_yaml({**settings, "runs": runs})))
                return ExitStatus.OK
        except KeyboardInterrupt:  # while the words were read (run() says the same of its own start)
            print(NOT_STARTED, file=sys.stderr)
            return ExitStatus.INTERRUPTED
        # A second Ctrl-C while the runs run quits at once: its KeyboardInterrupt goes on from here.
        return run(spec).status
    except USER_ERRORS as e:
        return process.fail(str(e), ExitStatus.BAD_INPUT)

if __name__ == "__main__":
    process.finish(main())
