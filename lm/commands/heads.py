"""`make heads`: knock-out of every head of finished runs, logged on each run and printed as a head table.

    python -m lm.commands.heads run=RUN_ID [force=true]          # `make heads RUN=...`: log it, print the head table
    python -m lm.commands.heads exercise=heads [quick=true]      # `make heads EXERCISE=...`: every finished run

The options: lm/settings/options.py's HeadsOptions. A run's knock-out, measured from its stored model and logged, is
lm/measures/finished_run.py; this command finds the runs and prints their tables (lm/knockout/summary.py).
"""
import sys

if __name__ == "__main__":  # the options checked before pandas, torch and MLflow load (lm/commands/cli.py)
    from lm import process
    from lm.commands import cli
    process.before_imports(cli.heads_before_imports)

import torch
from tqdm import tqdm

from lm.commands import cli
from lm.knockout.summary import intact_loss, largest_head, terminal_table
from lm.knockout.table import WINDOWS
from lm.measures.finished_run import knock_out
from lm.model.data import DataError
from lm.settings import exercises
from lm.settings.errors import ConfigError
from lm.tracking.naming import experiment_name
from lm.tracking.store import Store, TrackingError, finished_runs


def main(argv: list[str] | None = None) -> int:
    """The exit status of the knock-outs the words ask for: one run's, printed as its head table, or every finished
    run's of the exercises named, a line each."""
    try:
        opts = cli.heads_options(sys.argv[1:] if argv is None else argv)
        chosen = exercises.select(opts.exercise) if opts.exercise else []
        store = Store(opts.tracking_uri or None)
        if opts.run:
            try:
                store.client.get_run(opts.run)
            except Exception:
                raise ConfigError(f"run={opts.run!r}: no such run in {store.shown}") from None
    except (ConfigError, TrackingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if opts.run:
        try:
            table, heads, computed = knock_out(store, opts.run, opts.force, opts.threads)
        except (ValueError, DataError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"run {opts.run}: validation loss {intact_loss(table):.3f} on the first {WINDOWS} validation windows, and its "
              f"increase when each head, attention or MLP is knocked out (nats per character)")
        print(terminal_table(table, heads))
        if computed:
            print(f"{len(table)} knock-outs in {table.attrs['seconds']:.1f} s ({table.attrs['cpu_seconds']:.1f} s of "
                  f"CPU, {torch.get_num_threads()} thread{'s' * (torch.get_num_threads() > 1)})")
        return 0
    for ex in chosen:
        name = experiment_name(ex.name, opts.quick)
        runs = finished_runs(store.client, name)
        if not runs:
            print(f"{name}: no finished runs")
            continue
        bar = tqdm(runs, desc=name, unit="run")
        for run in bar:
            label = run.info.run_name or run.info.run_id
            try:
                table, _, computed = knock_out(store, run.info.run_id, opts.force, opts.threads)
            except (ValueError, DataError) as e:
                bar.write(f"{name} {label}: skipped, {e}")
                continue
            top = largest_head(table)
            how = f"{table.attrs['seconds']:.1f} s" if computed else "logged before"
            bar.write(f"{name} {label}: largest head block {top['block']}, head {top['head']} "
                      f"{top['increase']:+.3f} ({how})")
    return 0

if __name__ == "__main__":
    process.after_imports()  # the collector, off since before_imports
    process.finish(main())
