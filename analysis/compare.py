"""`make compare A=<store> B=<store>`: two stores' verdict tables side by side, and the claims that moved between them.

    python -m analysis.compare a=<store> b=<store> [quick=true] [ablations=nopos002,heads] [out=reports]

A store is its folder (`mlruns`, which holds mlflow.db), its database file, or a tracking URI. Each store's table is
the one `make report` builds on it (analysis.verdicts.table over the store's runs, the family counted over every
exercise), both from the same exercise files ($TINYGPT_EXPERIMENTS, else experiments/), so a claim is the same claim
in both. A claim moved when its verdict changed, or when a comparison's margin moved by more than NOISE standard
errors of the move (the two stores' standard errors of that margin, combined); where neither store measured an error
(one seed, no per-window losses) any change of the margin is a move. Run after a change to the code, it says whether
the lessons' verdicts stayed where they were.

Writes <out>/compare.html and <out>/compare.md; prints how many claims moved, and which. Exit status: 0 written, 1 a
store with no runs of the exercises, 2 a bad option or a store that is not there.
"""
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from lm.settings import exercises
from lm.settings.errors import ConfigError, TrackingError
from lm.settings.options import CompareOptions, parse
from lm.tracking.store_check import check_server, redact, shown, sqlite_file

# A margin moved when it moved by more than this many standard errors of the move: about the two-sided 95% band of a
# move that is only the two studies' noise (1.96). Over many claims a few such moves come by chance alone.
NOISE = 2.0
# Where neither store measured an error, a margin moved when it changed by more than rounding.
ROUNDING = 1e-9
STORES = {"a": "A", "b": "B"}
WHERE = "a store is its folder (mlruns), its mlflow.db, or a tracking URI"


class NothingToCompare(Exception):
    """A store with nothing to compare in it; the message is one line."""


# --- the stores -------------------------------------------------------------------------------------------------
def store_uri(text: str, name: str) -> str:
    """The tracking URI of a store as typed (a folder, its database file, or a URI); a ConfigError in one line for
    one that is not there. `name`: A or B, for the message."""
    if not text:
        raise ConfigError(f"{name} is missing: make compare A=<store> B=<store> ({WHERE})")
    if "://" in text:
        db = sqlite_file(text)
        if db is not None and not db.is_file():
            raise ConfigError(f"{name}={text}: no MLflow store at {db} ({WHERE})")
        return text
    path = Path(text).expanduser()
    if path.is_dir():
        path = path / "mlflow.db"
        if not path.is_file():
            raise ConfigError(f"{name}={text}: no mlflow.db in that folder ({WHERE})")
    elif not path.is_file():
        raise ConfigError(f"{name}={text}: no such folder or file ({WHERE})")
    return f"sqlite:///{path.resolve()}"


def options(argv: list[str]) -> tuple[CompareOptions, dict[str, str]]:
    """The options, and each store's URI ({"A": ..., "B": ...}), checked before any heavy import."""
    opts = parse(CompareOptions, argv)
    opts.ablations = opts.ablations.strip("[]")
    # An exercise no file names is refused here; a sweep (sweep/<name>) only a store holds is looked for there.
    named = [n.strip() for n in opts.ablations.split(",") if n.strip() not in ("", "all")]
    exercises.select([n for n in named if not n.startswith("sweep/")] or "all", exercises.load_all())
    uris = {name: store_uri(getattr(opts, key), name) for key, name in STORES.items()}
    for name, uri in uris.items():
        try:
            check_server(uri)
        except TrackingError as e:
            raise ConfigError(f"{name}: {e}") from None
    return opts, uris


def table(uri: str, name: str, quick: bool, ablations: str):
    """The store's verdict table, as `make report` builds it, and the exercises it has finished runs of;
    NothingToCompare where it holds no run of the exercises."""
    from analysis import runs, verdicts
    from analysis.store_reading.reader import StoreError

    try:
        _, found, known, judged = runs.claims_runs(quick, ablations, uri)
    except StoreError as e:
        raise NothingToCompare(f"{name}: {e}") from None
    ran = {n for n in judged if len(found[n].finished)}
    if not ran:
        which = "quick " if quick else ""
        raise NothingToCompare(f"{name}: no finished runs of the {which}exercises in {redact(uri)}"
                        + ("" if quick else "; a quick store needs quick=true"))
    return verdicts.table(found, known, judged), ran


# --- the comparison ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Margin:
    """One comparison's margin in one store, and its standard error (0 where none was measured)."""
    diff: float
    se: float

    def __str__(self) -> str:
        return f"{self.diff:+.3g}" + (f" ± {self.se:.2g}" if self.se else "")


@dataclass(frozen=True)
class Side:
    """One claim in one store's table: its verdict, our number and each comparison's margin (None: a comparison
    with no margin)."""
    verdict: str
    ours: str
    margins: tuple[Margin | None, ...]

    @classmethod
    def of(cls, row) -> "Side":
        from analysis.report import numbers, outcomes

        margins = tuple(Margin(c.difference.diff, c.difference.se or 0.0) if c.difference is not None else None
                        for c in row.verdict.comparisons)
        return cls(outcomes.outcome(row), numbers.ours(row.verdict.ours) or "-", margins)

    @property
    def margin(self) -> str:
        return "; ".join(str(m) if m else "-" for m in self.margins) or "-"


@dataclass(frozen=True)
class Line:
    """A claim in both tables (or in one), and what moved between them: nothing when `moves` is empty."""
    exercise: str
    index: int
    text: str
    a: Side | None
    b: Side | None
    moves: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.exercise} #{self.index}"


def margin_move(k: int, a: Margin | None, b: Margin | None, count: int) -> str | None:
    """Why comparison k's margin moved, or None where it stayed within its noise."""
    which = f"margin {k}" if count > 1 else "the margin"
    if a is None or b is None:
        return None if a is b else f"{which}: in {'B' if a is None else 'A'} only"
    if math.isnan(a.diff) or math.isnan(b.diff):
        return None if math.isnan(a.diff) and math.isnan(b.diff) else f"{which}: {a} → {b}"
    move, noise = b.diff - a.diff, math.hypot(a.se, b.se)
    if noise:
        if abs(move) <= NOISE * noise:
            return None
        return f"{which} {a} → {b}: moved {move:+.3g}, {abs(move) / noise:.1f} standard errors"
    if abs(move) <= ROUNDING * max(1.0, abs(a.diff), abs(b.diff)):
        return None
    return f"{which} {a} → {b}: moved {move:+.3g}, no error measured (one seed)"


def moves(a: Side | None, b: Side | None) -> tuple[str, ...]:
    """What moved of a claim between A and B: its verdict, its margins beyond their noise."""
    if a is None or b is None:
        return (f"in {'B' if a is None else 'A'} only",)
    out = [f"verdict {a.verdict} → {b.verdict}"] if a.verdict != b.verdict else []
    if len(a.margins) != len(b.margins):
        return (*out, f"{len(a.margins)} comparisons in A, {len(b.margins)} in B")
    found = (margin_move(k, ma, mb, len(a.margins)) for k, (ma, mb) in enumerate(zip(a.margins, b.margins), 1))
    return (*out, *filter(None, found))


def compare(table_a, table_b, exercises: set[str] | None = None) -> list[Line]:
    """Every claim of either table (of `exercises` only, where given), in A's order and then B's own, with what
    moved."""
    sides = {"A": {}, "B": {}}
    texts = {}
    for name, t in (("A", table_a), ("B", table_b)):
        for row in t.rows:
            key = (row.exercise, row.index)
            if exercises is not None and row.exercise not in exercises:
                continue
            sides[name][key] = Side.of(row)
            texts.setdefault(key, row.claim.text)
    return [Line(*key, texts[key], sides["A"].get(key), sides["B"].get(key),
                 moves(sides["A"].get(key), sides["B"].get(key))) for key in texts]


def headline(lines: list[Line]) -> str:
    """The one line that says how many claims moved."""
    moved = [ln for ln in lines if ln.moves]
    verdicts = sum(any(m.startswith("verdict") for m in ln.moves) for ln in moved)
    if not moved:
        return f"No claim moved: all {len(lines)} claims have the same verdict and their margins within their noise."
    return (f"{len(moved)} of {len(lines)} claims moved: {verdicts} with a verdict changed, {len(moved) - verdicts} "
            f"with only a margin beyond its noise.")


# --- the pages --------------------------------------------------------------------------------------------------
def write(lines: list[Line], uris: dict[str, str], out: Path, left_out: list[str] = ()) -> list[Path]:
    """compare.html and compare.md in out: the headline, what moved, then every claim side by side; `left_out`: the
    exercises neither store ran, named under the table."""
    import pandas as pd

    from analysis.report import outcomes
    from analysis.report.document import Doc

    doc = Doc(out / "figures")   # no figures; the folder is never made
    title = "Two stores compared"
    doc.h(1, title)
    doc.p(f"**{headline(lines)}**")
    doc.p(f"A: {shown(uris['A'])}. B: {shown(uris['B'])}. Each store's verdict table is the one `make report` builds "
          f"on it, from the same exercise files. A claim moved when its verdict changed, or when a margin moved by "
          f"more than {NOISE:g} standard errors of the move (the two stores' standard errors of that margin, "
          f"combined); where neither store measured one (one seed), by more than rounding.")

    def cells(ln: Line) -> dict:
        return {"exercise": ln.exercise, "#": ln.index, "claim": ln.text,
                "verdict in A": ln.a.verdict if ln.a else "-", "verdict in B": ln.b.verdict if ln.b else "-"}

    def colours(shown_lines: list[Line]) -> dict[str, list[str]]:
        return {f"verdict in {s}": [f"v-{outcomes.slug(getattr(ln, s.lower()).verdict)}" if getattr(ln, s.lower())
                                    else "" for ln in shown_lines] for s in ("A", "B")}

    moved = [ln for ln in lines if ln.moves]
    doc.h(2, "What moved")
    if moved:
        doc.table(pd.DataFrame([{**cells(ln), "what moved": "; ".join(ln.moves)} for ln in moved]),
                  classes=colours(moved), wide=("claim", "what moved"))
    else:
        doc.p("Nothing.")
    doc.h(2, "Every claim")
    doc.table(pd.DataFrame([{**cells(ln), "ours in A": ln.a.ours if ln.a else "-",
                             "ours in B": ln.b.ours if ln.b else "-", "margin in A": ln.a.margin if ln.a else "-",
                             "margin in B": ln.b.margin if ln.b else "-", "moved": "yes" if ln.moves else "no"}
                            for ln in lines]), classes=colours(lines), wide=("claim",))
    if left_out:
        doc.p(f"Left out, run in neither store: {', '.join(left_out)}.")
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "compare.html", out / "compare.md"]
    paths[0].write_text(doc.html(title), encoding="utf-8")
    paths[1].write_text(doc.markdown(), encoding="utf-8")
    return paths


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    try:
        opts, uris = options(argv)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        tables = {name: table(uri, name, opts.quick, opts.ablations) for name, uri in uris.items()}
    except NothingToCompare as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except ConfigError as e:   # an exercise neither the files nor the store holds
        print(f"error: {e}", file=sys.stderr)
        return 2
    (table_a, ran_a), (table_b, ran_b) = tables["A"], tables["B"]
    # Every exercise is judged, as the report judges them; an exercise neither store ran is not run in both: left out.
    ran = ran_a | ran_b
    left_out = sorted({r.exercise for t in (table_a, table_b) for r in t.rows} - ran)
    lines = compare(table_a, table_b, ran)
    paths = write(lines, uris, Path(opts.out), left_out)
    print(headline(lines))
    for ln in lines:
        if ln.moves:
            print(f"  {ln.name} ({ln.text}): {'; '.join(ln.moves)}")
    print(f"wrote {' and '.join(map(str, paths))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
