"""The layers of lm/ and analysis/, as pyproject.toml's import-linter contracts declare them (README, "Layout"), and
each contract shown to bite."""
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = str(Path(sys.executable).with_name("lint-imports"))
CONTRACTS = [c["name"] for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
             ["contracts"]]
# One violation of each contract, by its name: (the file, the import added at its end, the import lint-imports names).
VIOLATIONS = {
    "lm is in layers: commands and tools over the suite, one run, the measures, tracking, the model, the spec":
        ("lm/model/model.py", "from lm.commands import cli", "lm.model.model -> lm.commands.cli"),
    "lm never imports analysis":
        ("lm/spec/__init__.py", "import analysis.options", "lm.spec -> analysis.options"),
    "the spec imports no torch, Lightning, MLflow, pandas, seaborn or matplotlib":
        ("lm/spec/__init__.py", "import pandas", "lm.spec -> pandas"),
    "analysis is in rooms, in layers: make decide, over the notebook API, over the report, over reading the store and "
    "the verdict engine, over the options":
        ("analysis/options.py", "from analysis.verdicts import decision", "analysis.options -> analysis.verdicts"),
    "the verdict engine imports no MLflow, matplotlib, seaborn or torch, and neither the report nor the store":
        ("analysis/verdicts/stats.py", "import mlflow", "analysis.verdicts.stats -> mlflow"),
    "analysis imports neither lm.commands nor lm.tools":
        ("analysis/runs.py", "from lm.tools import bench", "analysis.runs -> lm.tools.bench"),
    "the report is in layers: its frame, over the exercises' sections, over the frame's own sections, over the kinds, "
    "the document, the painter and the drawings":
        ("analysis/report/kinds.py", "from analysis.report import parent_runs",
         "analysis.report.kinds -> analysis.report.parent_runs"),
    "no import loops between the modules of a package":
        ("analysis/verdicts/decision.py", "from analysis.verdicts import claims_table", ".decision -> .claims_table"),
}


def lint(cwd: Path) -> subprocess.CompletedProcess:
    # Wide lines: a contract's name on one line, as it is named here.
    return subprocess.run([LINT, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "1000"})


def test_every_import_contract_is_kept():
    p = lint(ROOT)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "0 broken" in p.stdout
    assert all(f"{name} KEPT" in p.stdout for name in CONTRACTS)


def test_every_contract_has_a_violation_that_shows_it_bites():
    assert sorted(VIOLATIONS) == sorted(CONTRACTS)


@pytest.mark.parametrize("name", VIOLATIONS, ids=[name.split(":")[0] for name in VIOLATIONS])
def test_a_contract_is_broken_by_an_import_that_violates_it(name, tmp_path):
    """The same tree with one import added is refused, under that contract's name."""
    file, line, named = VIOLATIONS[name]
    tree = tmp_path / "tree"
    for part in ("lm", "analysis"):
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree)
    target = tree / file
    target.write_text(target.read_text() + f"\n{line}  # noqa: E402,F401\n")
    p = lint(tree)
    assert p.returncode != 0
    assert f"{name} BROKEN" in p.stdout and named in p.stdout, p.stdout[-3000:]
