"""The report's figures, saved by worker processes while the report goes on (analysis/figures.py's Saver)."""
import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from analysis import figures


def _figures():
    rng = np.random.default_rng(0)
    w = np.tril(rng.random((12, 12)))
    att = {"chars": list("To be, or no"), "weights": [[(w / w.sum(1, keepdims=True)).tolist()] * 2] * 2}
    curve = pd.DataFrame([{"variant": v, "metric": "val_loss", "seed": s, "step": k, "value": 4 - k / 1000 + s / 50}
                          for v in ("a", "b") for s in (1, 2) for k in range(0, 3001, 250)])
    return {"grid": figures.attention_grid([("base", att)], "every head"),
            "curves": figures.curves(curve, {"uniform": 4.17}, "curves")}


def test_a_figure_saved_by_a_worker_is_the_same_png_as_one_saved_in_the_process(tmp_path):
    saver = figures.Saver(workers=2)
    for name, fig in _figures().items():
        saver.save(fig, tmp_path / f"{name}.worker.png")
    saver.wait()
    for name, fig in _figures().items():
        figures.save(fig, tmp_path / f"{name}.here.png")
        here = matplotlib.image.imread(tmp_path / f"{name}.here.png")
        there = matplotlib.image.imread(tmp_path / f"{name}.worker.png")
        assert here.shape == there.shape and np.array_equal(here, there), name


def test_a_figure_that_cannot_be_saved_is_an_error_when_the_report_waits(tmp_path):
    saver = figures.Saver(workers=1)
    saver.save(_figures()["curves"], tmp_path / "no such folder" / "x.png")
    with pytest.raises(FileNotFoundError):
        saver.wait()
