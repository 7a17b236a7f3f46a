"""For a paper, on a quick store of nopos002: `make export` writes the verdict table and each exercise's per-variant
means as CSV and LaTeX, beside the runs' tables; `make report ARGS="svg=true"` writes each figure as SVG beside its
PNG."""
import re
import xml.etree.ElementTree as ET

import pandas as pd

from analysis import runs
from analysis.report import frame
from lm.settings.exercises import load_all


def test_make_export_writes_the_verdict_table_and_the_means_as_csv_and_latex(nopos002_stores, tmp_path):
    a, _ = nopos002_stores
    uri = f"sqlite:///{a}/mlflow.db"
    assert runs.main(["quick=true", f"tracking_uri={uri}", f"out={tmp_path}"]) == 0
    # the verdict table: every claim of every exercise, as the notebook API and the report compute it
    verdicts = pd.read_csv(tmp_path / "verdicts.csv", keep_default_na=False)
    expected = runs.verdicts(quick=True, tracking_uri=uri)
    assert len(verdicts) == len(expected) == sum(len(ex.claims) for ex in load_all().values())
    assert verdicts["claim"].tolist() == expected["claim"].tolist()
    assert verdicts["verdict"].tolist() == expected["verdict"].astype(str).tolist()
    tex = (tmp_path / "verdicts.tex").read_text()
    assert tex.startswith("\\begin{longtable}") and tex.rstrip().endswith("\\end{longtable}")
    body = tex.split("\\endlastfoot\n")[1].split("\\end{longtable}")[0]
    assert len([ln for ln in body.splitlines() if ln.endswith("\\\\")]) == len(expected)
    assert "Without position vectors the validation loss is worse" in body and "val_loss" not in body.replace(
        "val\\_loss", "")   # _ escaped
    # the means: only the exercise the store ran, a row per variant, numbers, the seeds in their own column
    assert sorted(p.name for p in (tmp_path / "means").iterdir()) == ["nopos002.csv", "nopos002.tex"]
    means = pd.read_csv(tmp_path / "means" / "nopos002.csv").set_index("variant")
    df = runs.table(quick=True, ablations="nopos002", tracking_uri=uri)
    for variant in ("pos", "nopos"):
        assert means.loc[variant, "val_loss"] == df.loc[df.variant == variant, "val_loss"].item()
        assert means.loc[variant, "seeds"] == 1 and pd.isna(means.loc[variant, "val_loss std"])
    assert {"val_loss", "val_perplexity", "shuffle_change"} <= set(means.columns)
    table = (tmp_path / "means" / "nopos002.tex").read_text()
    assert "\\caption{No position vectors (lesson 002)}" in table and "\\label{tab:nopos002}" in table
    pos = next(ln for ln in table.splitlines() if ln.startswith("pos &"))
    assert re.match(rf"pos & 1 & {means.loc['pos', 'val_loss']:.4g} & ", pos), pos


def test_the_report_writes_each_figure_as_svg_beside_its_png_when_asked(nopos002_stores, tmp_path):
    a, _ = nopos002_stores
    out = tmp_path / "report"
    words = [f"tracking_uri=sqlite:///{a}/mlflow.db", "quick=true", "ablations=nopos002", f"out={out}", "log=false"]
    assert frame.main([*words, "svg=true"]) == 0
    pngs, svgs = sorted(out.glob("figures/*.png")), sorted(out.glob("figures/*.svg"))
    assert pngs and [p.stem for p in svgs] == [p.stem for p in pngs]
    for svg in svgs:
        assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert frame.main(words) == 0   # not asked: the old SVGs go, none is written
    assert not list(out.glob("figures/*.svg")) and sorted(out.glob("figures/*.png")) == pngs
