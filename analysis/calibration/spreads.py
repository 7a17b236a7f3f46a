"""What the calibration draws each number with: per metric, what kind of number it is (a continuous one, a share, a
whole count, a tag, a constant) and its spread over seeds and over windows, from spreads.csv beside this file, each
row with its source: a store where one was measured, the settings where a number cannot vary, "assumed" where no
store here has measured it. A t-test's error rate does not depend on a number's scale; what its kind is (a count that
ties, a share at its bound, a number every seed gives alike) decides which test the engine takes, so the kinds matter
and the scales much less.

A row matches a number by exercise, variant, metric and step, each an fnmatch pattern (step: `final`, a step, `*`);
the most specific row wins. The command measures rows from a store's runs, to replace assumed ones:

    python -m analysis.calibration.spreads [experiments=[baseline,se500]] [quick=true] [tracking_uri=...]

prints a row per (experiment, variant, metric) with at least two seeds: mean, sd over seeds, and where the runs logged
each window's value (val_window_losses.npy), the per-window sd, the windows and their correlation between runs.
"""
import csv
import fnmatch
import functools
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

TABLE = Path(__file__).with_name("spreads.csv")
# Two runs' losses on the same window correlate: their text's difficulty is shared. Measured on 5 seeds of the base
# model at 500 steps, every window of the held-out text (1,743): 0.906 to 0.925 between any two, 0.92 on average
# (`python -m analysis.calibration.spreads`; docs/notebook.md has the run).
WINDOW_CORRELATION = 0.92


class SpreadKind(StrEnum):
    """What a number is, which decides how it varies over seeds."""
    CONTINUOUS = "continuous"   # normal about its center
    SHARE = "share"             # normal, held to [0, 1]: a share at its bound ties across seeds
    INTEGER = "integer"         # whole numbers, which tie across seeds
    TAG = "tag"                 # a text, the same or not on each seed
    CONSTANT = "constant"       # every seed gives the same number


@dataclass(frozen=True)
class Spread:
    """One row: the pattern it matches, the number's kind, typical value and spreads, and where they come from."""
    exercise: str
    variant: str
    metric: str
    step: str           # "final", a step, or "*"
    kind: SpreadKind
    center: float | str
    sd: float           # over seeds
    window_sd: float    # over the windows our number averages (0: not window-scored, or not known)
    windows: int        # how many windows our number averages
    per_window: bool    # whether the store logs each window's value for it
    source: str

    def matches(self, exercise: str, variant: str, metric: str, step: int | None) -> bool:
        at = "final" if step is None else str(step)
        return all(fnmatch.fnmatchcase(x, p) for x, p in ((exercise, self.exercise), (variant, self.variant),
                                                          (metric, self.metric), (at, self.step)))

    @property
    def specificity(self) -> int:
        return sum(p != "*" for p in (self.exercise, self.variant, self.step)) + 2 * ("*" not in self.metric) + \
            (self.metric != "*")


def _row(r: dict) -> Spread:
    kind = SpreadKind(r["kind"])
    center = r["center"] if kind == SpreadKind.TAG else float(r["center"])
    return Spread(r["exercise"], r["variant"], r["metric"], r["step"], kind, center, float(r["sd"] or 0),
                  float(r["window_sd"] or 0), int(r["windows"] or 0), r["per_window"] == "true", r["source"])


@functools.lru_cache(maxsize=1)
def table(path: Path = TABLE) -> tuple[Spread, ...]:
    with open(path, newline="", encoding="utf-8") as f:
        return tuple(_row(r) for r in csv.DictReader(f))


def find(exercise: str, variant: str, metric: str, step: int | None) -> Spread:
    """The most specific row for a number (the first of equals): the table's last row for `*` matches any."""
    rows = [r for r in table() if r.matches(exercise, variant, metric, step)]
    return max(rows, key=lambda r: r.specificity)


def describe(s: Spread) -> str:
    """A row in words, for the calibration's listing."""
    what = f"{s.kind}" + ("" if s.kind in (SpreadKind.TAG, SpreadKind.CONSTANT) else f", sd {s.sd:.3g}")
    if s.window_sd:
        what += f", per-window sd {s.window_sd:.3g} over {s.windows}" + (" (logged)" if s.per_window else "")
    return f"{what}: {s.source}"


# --- measuring them from a store ---------------------------------------------------------------------------
def measure(experiments: list[str], quick: bool, tracking_uri: str | None) -> list[dict]:
    """A row per (experiment, variant, metric) of the runs of each experiment (an exercise's, or any other), over the
    seeds of its newest finished runs."""
    import numpy as np

    from analysis.store_reading.reader import WINDOW_VALUES, Reader
    from lm.tracking.naming import experiment_name
    from lm.tracking.store_check import resolve_uri

    uri = resolve_uri(tracking_uri)
    reader = Reader(uri)
    rows = []
    for name in experiments:
        experiment = experiment_name(name, quick)
        df = reader.runs(experiment)
        if not len(df):
            print(f"warning: no runs in {experiment}", file=sys.stderr)
            continue
        df = df[df["status"] == "FINISHED"].sort_values("start_time", ascending=False)
        variant = df["tags.variant"].fillna("-") if "tags.variant" in df else "-"
        seed = df["params.seed"] if "params.seed" in df else df["tags.seed"]
        df = df.assign(_variant=variant, _seed=seed).drop_duplicates(["_variant", "_seed"])
        for v, g in df.groupby("_variant"):
            for col in sorted(c for c in g if c.startswith("metrics.")):
                x = g[col].dropna().astype(float).to_numpy()
                if len(x) < 2:
                    continue
                metric = col.removeprefix("metrics.")
                kind = SpreadKind.CONSTANT if np.ptp(x) == 0 else SpreadKind.INTEGER if np.all(x == np.round(x)) else \
                    SpreadKind.SHARE if np.all((0 <= x) & (x <= 1)) else SpreadKind.CONTINUOUS
                row = {"exercise": name, "variant": v, "metric": metric, "step": "final", "kind": kind,
                       "center": f"{x.mean():.6g}", "sd": f"{x.std(ddof=1):.3g}", "window_sd": "", "windows": "",
                       "per_window": "false", "source": f"measured: {len(x)} seeds, {experiment} in {uri}"}
                artifact = WINDOW_VALUES.get(metric)
                paths = [reader.artifact(r, artifact) for r in g["run_id"]] if artifact else []
                arrays = [np.load(p) for p in paths if p]
                if len(arrays) >= 2 and len({len(a) for a in arrays}) == 1:
                    a = np.array(arrays, float)
                    pairs = np.corrcoef(a)[np.triu_indices(len(a), 1)]
                    row.update(window_sd=f"{a.std(axis=1, ddof=1).mean():.3g}", windows=str(a.shape[1]),
                               per_window="true", source=row["source"] + f"; windows correlate {pairs.mean():.3f} "
                                                                         f"({pairs.min():.3f} to {pairs.max():.3f})")
                rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    from lm.settings import options
    from lm.settings.errors import ConfigError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        opts = options.parse(options.SpreadsOptions, argv)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from analysis.store_reading.reader import StoreError
    from lm.settings.exercises import load_all

    names = opts.experiments or list(load_all())
    try:
        rows = measure(names, opts.quick, opts.tracking_uri)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    out = csv.DictWriter(sys.stdout, fieldnames=[f.name for f in Spread.__dataclass_fields__.values()])
    out.writeheader()
    out.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

