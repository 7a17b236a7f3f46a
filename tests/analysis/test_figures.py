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
