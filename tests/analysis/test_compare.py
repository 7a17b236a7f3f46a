"""`make compare` (analysis/compare.py): two quick stores of nopos002 made with different settings (B trains its `pos`
variant at another learning rate) side by side; exactly the claims that read `pos` move, a store against itself
moves nothing, and a store that is not there is one line."""
import subprocess
from pathlib import Path

import pytest

from analysis import compare
from lm.settings.exercises import load_all, terms, tree
from tests.conftest import MAKE, user_env

ROOT = Path(__file__).resolve().parents[2]


def make_compare(a, b, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MAKE, "compare", f"A={a}", f"B={b}", f"ARGS=quick=true out={out} {' '.join(args)}"],
                          cwd=ROOT, env=user_env(), capture_output=True, text=True, timeout=300)


def reading(variant: str) -> set[str]:
    """nopos002's claims whose check or number reads the variant, as `exercise #n`."""
    ex = load_all()["nopos002"]
    return {f"nopos002 #{i}" for i, c in enumerate(ex.claims, 1)
            if any(v == variant for expr in filter(None, (c.check, c.ours)) for v, _, _ in terms(tree(expr).body))}


def moved_in_page(md: str) -> set[str]:
    """The claims the Markdown page's "What moved" table lists."""
    part = md.split("## What moved\n\n")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in part.splitlines() if line.startswith("| nopos002 ")]
    return {f"{r[0].removeprefix('| ')} #{r[1]}" for r in rows}


def test_compare_names_exactly_the_claims_that_read_the_changed_variant(nopos002_stores, tmp_path):
    a, b = nopos002_stores
    expected = reading("pos")
    assert expected and expected != reading("nopos") | expected   # some claims read pos, some do not
    done = make_compare(a, b, tmp_path)
    assert done.returncode == 0, done.stderr
    first, *named = done.stdout.splitlines()
    count = len(load_all()["nopos002"].claims)
    assert first.startswith(f"{len(expected)} of {count} claims moved")
    assert {line.split(" (")[0].strip() for line in named if line.startswith("  ")} == expected
    md, html = (tmp_path / "compare.md").read_text(), (tmp_path / "compare.html").read_text()
    assert md.splitlines()[2] == f"**{first}**" and first in html
    assert moved_in_page(md) == expected
    # every claim side by side, with each store's verdict, number and margin; the other exercises left out, named
    table = md.split("## Every claim\n\n")[1]
    assert table.startswith("| exercise | # | claim | verdict in A | verdict in B | ours in A | ours in B | "
                            "margin in A | margin in B | moved |")
    assert sum(line.startswith("| nopos002 |") for line in table.splitlines()) == count
    assert "Left out, run in neither store: aa, baseline" in md
    # no path of this machine in the page: the stores by folder and kind
    assert str(a) not in md + html and "a/mlflow.db (SQLite, outside the checkout)" in md


def test_a_store_against_itself_moves_nothing(nopos002_stores, tmp_path):
    a, _ = nopos002_stores
    done = make_compare(a, a / "mlflow.db", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("No claim moved: all 2 claims have the same verdict")
    assert "## What moved\n\nNothing." in (tmp_path / "compare.md").read_text()


@pytest.mark.parametrize("a, error", [
    ("/nonexistent/store", "error: A=/nonexistent/store: no such folder or file (a store is its folder (mlruns), its "
                           "mlflow.db, or a tracking URI)"),
    (ROOT / "experiments", f"error: A={ROOT / 'experiments'}: no mlflow.db in that folder"),
    ("sqlite:////nonexistent/mlflow.db", "error: A=sqlite:////nonexistent/mlflow.db: no MLflow store at "
                                         "/nonexistent/mlflow.db (a store is its folder"),
])
def test_a_store_that_is_not_there_is_one_line(nopos002_stores, tmp_path, a, error):
    done = make_compare(a, nopos002_stores[1], tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    said = [line for line in done.stderr.splitlines() if not line.startswith("make: ***")]   # make's own line
    assert len(said) == 1 and said[0].startswith(error)
    assert not (tmp_path / "compare.md").exists()


def test_a_store_without_the_exercises_runs_and_a_missing_b_are_one_line(nopos002_stores, tmp_path, capsys):
    a, b = nopos002_stores
    assert compare.main([f"a={a}", f"b={b}", f"out={tmp_path}"]) == 1   # quick runs only: the full suite's are none
    assert capsys.readouterr().err == (f"error: A: no finished runs of the exercises in sqlite:///{a}/mlflow.db; a "
                                       f"quick store needs quick=true\n")
    assert compare.main([f"a={a}", "quick=true"]) == 2
    assert capsys.readouterr().err.startswith("error: B is missing: make compare A=<store> B=<store>")


def side(verdict="indicative", *margins):
    return compare.Side(verdict, "-", tuple(compare.Margin(*m) if m else None for m in margins))


def test_a_margin_moves_beyond_its_noise_and_a_verdict_when_it_changes():
    # within NOISE standard errors of the move (the two errors combined) it stays; beyond, it moves
    assert compare.moves(side("reproduced", (0.10, 0.03)), side("reproduced", (0.17, 0.03))) == ()
    beyond = compare.moves(side("reproduced", (0.10, 0.03)), side("reproduced", (0.23, 0.03)))
    assert beyond == ("the margin +0.1 ± 0.03 → +0.23 ± 0.03: moved +0.13, 3.1 standard errors",)
    # a verdict that changes moves, whatever its margin; each margin of a chain is its own
    assert compare.moves(side("reproduced", (0.1, 0.03)), side("within seed noise", (0.1, 0.05))) == \
        ("verdict reproduced → within seed noise",)
    assert compare.moves(side("x", (1.0, 0.0), (2.0, 0.0)), side("x", (1.0, 0.0), (2.5, 0.0))) == \
        ("margin 2 +2 → +2.5: moved +0.5, no error measured (one seed)",)
    # no error measured: only rounding is no move; a comparison with no margin in one store is one
    assert compare.moves(side("x", (0.3, 0.0)), side("x", (0.3 + 1e-15, 0.0))) == ()
    assert compare.moves(side("x", None), side("x", (0.3, 0.0))) == ("the margin: in B only",)
    assert compare.moves(None, side("x")) == ("in B only",)
