"""The report's figures, drawn and saved by worker processes while the report goes on (analysis/report/painter.py)."""
import subprocess
import sys

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from analysis.report.painter import Painter, paint, plot


def _plots():
    rng = np.random.default_rng(0)
    w = np.tril(rng.random((12, 12)))
    att = {"chars": list("To be, or no"), "weights": [[(w / w.sum(1, keepdims=True)).tolist()] * 2] * 2}
    curve = pd.DataFrame([{"variant": v, "metric": "val_loss", "seed": s, "step": k, "value": 4 - k / 1000 + s / 50}
                          for v in ("a", "b") for s in (1, 2) for k in range(0, 3001, 250)])
    return {"grid": plot("attention_grid", [("base", att)], "every head"),
            "curves": plot("curves", curve, {"uniform": 4.17}, "curves")}


def test_a_plot_painted_by_a_worker_is_the_same_png_as_one_painted_in_the_process(tmp_path):
    painter = Painter(workers=2)
    for name, p in _plots().items():
        painter.paint(p, tmp_path / f"{name}.worker.png")
    painter.wait()
    for name, p in _plots().items():
        paint(p, str(tmp_path / f"{name}.here.png"))
        here = matplotlib.image.imread(tmp_path / f"{name}.here.png")
        there = matplotlib.image.imread(tmp_path / f"{name}.worker.png")
        assert here.shape == there.shape and np.array_equal(here, there), name


def test_a_figure_that_cannot_be_saved_is_an_error_when_the_report_waits(tmp_path):
    painter = Painter(workers=1)
    painter.paint(_plots()["curves"], tmp_path / "no such folder" / "x.png")
    with pytest.raises(FileNotFoundError):
        painter.wait()


def test_a_plot_that_names_no_drawing_is_an_error_when_the_report_waits(tmp_path):
    painter = Painter(workers=1)
    painter.paint(plot("no_such_figure"), tmp_path / "x.png")
    with pytest.raises(AttributeError, match="no_such_figure"):
        painter.wait()


def test_the_report_s_own_process_imports_neither_matplotlib_nor_torch():
    """They are the workers' (matplotlib, seaborn) and the runs' (torch): 1.1 and 1.2 s of the report's start-up."""
    code = ("import sys, analysis.report.frame; "
            "print(sorted(m for m in ('matplotlib', 'seaborn', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_small_multiples_wrap_within_the_page_and_show_every_seed():
    """sqrtd's seven final values: panels in rows no wider than the page (once a 5,400-pixel strip), each with
    every seed as a dot beside the mean, and the lesson's number as a red line where a claim gives one."""
    from analysis.report import figures

    variants = ["scaled", "unscaled", "scaled_d64", "unscaled_d64", "unscaled_d128"]
    metrics = [f"metric_{k}" for k in range(7)]
    df = pd.DataFrame([{"variant": v, "metric": m, "seed": s, "value": i + 0.1 * s}
                       for i, v in enumerate(variants) for m in metrics for s in (1, 2, 3)])
    mark = {"variant": "unscaled", "key": "metric_0", "metric": "metric_0", "step": None, "low": 4.0, "high": 4.0,
            "text": "the lesson: 4", "lesson": True}
    fig = figures.finals(df, "seven metrics", [mark])
    width, _ = fig.get_size_inches()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    assert width <= figures.MAX_WIDTH and len(panels) == 7
    assert len({round(ax.get_position().y0, 3) for ax in panels}) >= 2   # wrapped into rows
    for ax in panels:
        seeds = [c for c in ax.collections if c.get_label() == "each seed"]
        assert sum(len(c.get_offsets()) for c in seeds) == len(variants) * 3
    red = [ln for ln in panels[0].lines if ln.get_label() == "the lesson's number"]
    assert len(red) == 1 and list(red[0].get_ydata()) == [4.0, 4.0]
    assert not [ln for ln in panels[1].lines if ln.get_label() == "the lesson's number"]
    figures.plt.close(fig)


def test_a_figure_wider_than_the_page_is_an_error(tmp_path):
    from analysis.report import figures

    fig = figures.plt.figure(figsize=(figures.MAX_WIDTH + 1, 3))
    with pytest.raises(ValueError, match="wider than the page"):
        figures.save(fig, tmp_path / "wide.png")
