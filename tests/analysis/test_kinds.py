"""The report's generic kinds and the exercises' `report:` blocks, without a store."""
import ast
from pathlib import Path

import pandas as pd
import pytest

from analysis.report import figures, kinds, sections
from lm.settings.config import ConfigError
from lm.settings.exercises import load_all, parse

ROOT = Path(__file__).resolve().parents[2]


def test_every_lesson_exercise_declares_its_section_and_the_frame_names_none():
    for name, ex in load_all().items():
        assert ex.report, name
        assert all(isinstance(p, kinds.SectionKind) for p in sections.entries(ex))
    # Sections come from the exercises: the frame holds no exercise's name, so renaming one cannot orphan it.
    tree = ast.parse((ROOT / "analysis" / "report" / "frame.py").read_text())
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not strings & set(load_all())


def test_an_exercise_without_a_report_block_gets_curves_and_final_values():
    ex = parse("mine", "title: t\nlesson: l\nmeasures: m\nvariants: {a: [], b: [model.n_head=2]}\n", "mine.yaml")
    assert [type(p) for p in sections.entries(ex)] == [kinds.Curves, kinds.Final]


def test_a_report_block_that_is_not_a_list_of_kinds_is_one_line():
    with pytest.raises(ConfigError, match=r"^mine.yaml:5: report must be a list of entries, each with a kind"):
        parse("mine", "title: t\nlesson: l\nmeasures: m\nvariants: {a: []}\nreport: curves\n", "mine.yaml")


def test_a_grid_sweep_draws_each_param_against_the_others():
    df = pd.DataFrame([{"metric": "validation loss", "seed": s, "model.n_head": h, "model.n_layer": n,
                        "value": 3 - 0.1 * h - 0.2 * n + 0.01 * s}
                       for h in (1, 2, 4) for n in (2, 4) for s in (1, 2, 3)])
    fig = figures.sweep(df, ["model.n_head", "model.n_layer"], "grid", "validation loss")
    by_head, by_layer = fig.axes[:2]
    assert by_head.get_xlabel() == "model.n_head" and by_layer.get_xlabel() == "model.n_layer"
    assert [t.get_text() for t in by_head.get_legend().get_texts()] == ["each seed", "model.n_layer=2",
                                                                         "model.n_layer=4"]
    assert [t.get_text() for t in by_layer.get_legend().get_texts()] == ["each seed", "model.n_head=1",
                                                                          "model.n_head=2", "model.n_head=4"]
    # Each line's points are the means over seeds, at each swept value.
    xs, ys = by_head.lines[0].get_data()
    assert list(xs) == [1, 2, 4] and ys[0] == pytest.approx(3 - 0.1 - 0.4 + 0.02)
    figures.plt.close(fig)
