"""What a store pools each metric's seed variance over (analysis/verdicts/variance.py), so that a simulated store
pools over as much: per metric and phase, how many variants measured it with a spread, and the prior the full study's
variances gave (census.csv beside this file, each row with its source).

A simulated store holds each claim in its own copy of the variants it reads; the real one also holds every other
variant that logs the same metrics (every run logs its validation loss, head statistics, probe and samples). Those
other variants are what a comparison borrows degrees of freedom from, so the simulation adds them (`bystanders`):
as many as the census counts, less the claims' own copies, each with the seeds of the first look and a variance
drawn from the census's prior (its scaled inverse chi-square), or, where the census has no row, none.

    python -m analysis.calibration.census [tracking_uri=...] [quick=true]

prints the rows of a store's full study (every exercise file's experiment), to replace census.csv's.
"""
import csv
import functools
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.verdicts import variance

TABLE = Path(__file__).with_name("census.csv")
FIELDS = ("metric", "phase", "groups", "df", "var", "source")


@dataclass(frozen=True)
class Row:
    metric: str
    phase: str
    groups: int
    df: float
    var: float
    source: str


@functools.lru_cache(maxsize=1)
def table(path: Path = TABLE) -> dict[tuple[str, str], Row]:
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["metric"], r["phase"]): Row(r["metric"], r["phase"], int(r["groups"]), float(r["df"]),
                                                float(r["var"]), r["source"]) for r in csv.DictReader(f)}


def variances(row: Row, n: int, rng: np.random.Generator) -> np.ndarray:
    """n variants' true seed variances, drawn from the row's prior: s0² d0 / chi²(d0) (d0 inf: all s0²)."""
    if math.isinf(row.df):
        return np.full(n, row.var)
    return row.var * row.df / rng.chisquare(row.df, n)


def measure(tracking_uri: str | None, quick: bool = False) -> list[dict]:
    """A row per pooled metric of the store's full study: its groups and its prior (variance.fit), as the table
    fits them."""
    from analysis.store_reading.reader import ExerciseRuns, Reader
    from lm.settings.exercises import load_all
    from lm.tracking.naming import experiment_name
    from lm.tracking.store_check import resolve_uri

    uri = resolve_uri(tracking_uri)
    reader = Reader(uri)
    groups: dict[tuple[str, str], list] = {}
    for name, ex in load_all().items():
        runs = ExerciseRuns(ex, experiment_name(name, quick), reader)
        for variant, key, step, per in runs.groups():
            groups.setdefault((key, variance.phase(key, step)), []).append(((name, variant), list(per.values())))
    rows = []
    for (key, phase), values in sorted(groups.items()):
        prior = variance.priors({(key, phase): values})[key, phase]
        if prior.groups:   # groups: the variants measuring it (a curve's steps are one variant's)
            rows.append({"metric": key, "phase": phase, "groups": prior.groups, "df": f"{prior.df:.4g}",
                         "var": f"{prior.var:.6g}", "source": "measured: the full study's store, every variant "
                                                              "with 2 seeds or more and a spread"})
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    given = dict(a.split("=", 1) for a in argv if "=" in a)
    unknown = set(given) - {"tracking_uri", "quick"} or {a for a in argv if "=" not in a}
    if unknown:
        print(f"error: unknown option {', '.join(sorted(unknown))}; the options are tracking_uri=... and quick=true",
              file=sys.stderr)
        return 2
    out = csv.DictWriter(sys.stdout, fieldnames=FIELDS)
    out.writeheader()
    out.writerows(measure(given.get("tracking_uri"), given.get("quick", "false").lower() in ("true", "1", "yes")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
