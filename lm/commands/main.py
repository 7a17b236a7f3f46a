"""`tinygpt`: every command of the project under one name, each a subcommand taking its own key=value words.

    tinygpt train model.n_head=2          tinygpt ablations quick=true        tinygpt report ablations=heads
    tinygpt sample run=RUN_ID             tinygpt <command> --help             tinygpt --help

A subcommand runs its module as `python -m MODULE WORDS` would, its checks before its heavy imports included.
"""
import difflib
import runpy
import sys

# Each subcommand: its module, the words put before the user's, and one line; the Makefile's target of each name.
COMMANDS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "train": ("lm.commands.train", (), "one run of the lessons' base model (key=value, --cfg, --resume RUN_ID)"),
    "sweep": ("lm.commands.train", ("-m",), "a grid of runs, Hydra's multirun syntax (model.n_head=1,2,4)"),
    "ablations": ("lm.commands.suite", (), "every exercise's runs (ablations=[nomask,heads] seeds=1 quick=true)"),
    "sample": ("lm.commands.sample", (), "text from a trained run (run=RUN_ID prompt=ROMEO:)"),
    "heads": ("lm.commands.heads", (), "knock-out of every head of finished runs (run=RUN_ID or exercise=heads)"),
    "report": ("analysis.report", (), "reports/report.html and report.md from the store"),
    "decide": ("analysis.decide", (), "seeds added in rounds to what the claims table leaves undecided"),
    "calibrate": ("analysis.calibration", (), "the claims table's error rate, simulated"),
    "export": ("analysis.runs", (), "the runs and their histories as Parquet and CSV (reports/export)"),
    "ui": ("lm.commands.ui", (), "MLflow's UI over the store (port=5001)"),
    "bench": ("lm.tools.bench", (), "the speed table"),
    "gpu-check": ("lm.tools.gpucheck", (), "on a lent GPU: the checks and timings"),
    "schema": ("lm.tools.schema", (), "experiments/exercise.schema.json, for editors"),
}
ALIASES = {"suite": "ablations", "gpucheck": "gpu-check"}


def usage() -> str:
    width = max(map(len, COMMANDS))
    rows = "\n".join(f"  {name:<{width}}  {line}" for name, (_, _, line) in COMMANDS.items())
    return (f"usage: tinygpt COMMAND [key=value ...]     (tinygpt COMMAND --help: its options and defaults)\n\n"
            f"commands:\n{rows}")


def main(argv: list[str] | None = None) -> int:
    """The exit status of the subcommand the words name, run in this process."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    name, rest = ALIASES.get(argv[0], argv[0]), argv[1:]
    if name not in COMMANDS:
        close = difflib.get_close_matches(name, COMMANDS, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        print(f"error: unknown command {argv[0]!r}{hint}; the commands are {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    module, before, _ = COMMANDS[name]
    sys.argv = [module, *before, *rest]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
