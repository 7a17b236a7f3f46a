"""The layers of lm/ and analysis/, as pyproject.toml's import-linter contracts declare them (docs/layout.md), and
each contract shown to bite."""
import ast
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
# Violations of each contract, by its name: (the file, the import added at its end, the import lint-imports names).
LAYERS = ("lm is in layers: commands and tools over the suite, one run, the measures, tracking, the head statistics "
          "and knock-out, the model, the settings beside the faults the reliability tests inject")
LIGHT = ("what a command reads before its heavy imports (the settings, the head-statistics and knock-out tables, the "
         "store check) imports no torch, Lightning, MLflow, pandas, seaborn or matplotlib")
NO_IO = "the settings do no I/O: no network, database or other process"
PLAIN = "the model and its data are plain PyTorch: lm.model imports no Lightning and no MLflow"
VIOLATIONS = {
    LAYERS: [
        # a library module that imports a command
        ("lm/model/model.py", "from lm.commands import cli", "lm.model.model -> lm.commands.cli"),
        # the knock-out and the head statistics are side by side: neither imports the other
        ("lm/knockout/summary.py", "from lm.heads import summary", "lm.knockout.summary -> lm.heads.summary"),
        # the faults are test scaffolding beside the settings, at the bottom: they import no layer
        ("lm/faults.py", "from lm.settings import config", "lm.faults -> lm.settings.config"),
    ],
    "lm never imports analysis": [("lm/settings/__init__.py", "import analysis.options", "lm.settings -> analysis.options")],
    LIGHT: [
        ("lm/settings/__init__.py", "import pandas", "lm.settings -> pandas"),
        ("lm/heads/table.py", "import torch", "lm.heads.table -> torch"),
        ("lm/knockout/table.py", "import pandas", "lm.knockout.table -> pandas"),
        ("lm/tracking/store_check.py", "import mlflow", "lm.tracking.store_check -> mlflow"),
        ("lm/settings/options.py", "from lm.model import model", "lm.model.model -> torch"),
    ],
    PLAIN: [
        # the data module back beside the corpus (a suite's process then imports Lightning to check its corpora)
        ("lm/model/data.py", "import pytorch_lightning", "lm.model.data -> pytorch_lightning"),
        ("lm/model/checkpoint.py", "import mlflow", "lm.model.checkpoint -> mlflow"),
    ],
    NO_IO: [
        # the settings downloading, querying a database, starting a process
        ("lm/settings/schema.py", "import urllib.request", "lm.settings.schema -> urllib"),
        ("lm/settings/exercises.py", "import sqlite3", "lm.settings.exercises -> sqlite3"),
        ("lm/settings/config.py", "import subprocess", "lm.settings.config -> subprocess"),
    ],
    "analysis is in rooms, in layers: make decide, over the notebook API, over the report, over the calibration, over "
    "the seeds an open claim needs, over reading the store and the verdict engine, over the options": [
        ("analysis/options.py", "from analysis.verdicts import decision", "analysis.options -> analysis.verdicts"),
        # the engine knows nothing of the calibration that measures it
        ("analysis/verdicts/decision.py", "from analysis import calibration",
         "analysis.verdicts.decision -> analysis.calibration")],
    "the verdict engine imports no MLflow, matplotlib, seaborn or torch, and neither the report nor the store": [
        ("analysis/verdicts/stats.py", "import mlflow", "analysis.verdicts.stats -> mlflow")],
    "analysis imports neither lm.commands nor lm.tools": [
        ("analysis/runs.py", "from lm.tools import bench", "analysis.runs -> lm.tools.bench")],
    "the report is in layers: its bare read (make bench's), its frame, over the exercises' sections, over the docs "
    "pages, over the frame's own sections, over the kinds, the document and the claims' marks, the outcomes, the "
    "painter and the drawings": [
        ("analysis/report/kinds.py", "from analysis.report import parent_runs",
         "analysis.report.kinds -> analysis.report.parent_runs"),
        ("analysis/report/outcomes.py", "from analysis.report import verdict_grid",
         "analysis.report.outcomes -> analysis.report.verdict_grid")],
    "no import loops between the modules of a package": [
        ("analysis/verdicts/decision.py", "from analysis.verdicts import claims_table", ".decision -> .claims_table")],
}
CASES = [(name, *v) for name, vs in VIOLATIONS.items() for v in vs]


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


@pytest.mark.parametrize("name, file, line, named", CASES, ids=[f"{c[0].split(':')[0]} ({c[1]})" for c in CASES])
def test_a_contract_is_broken_by_an_import_that_violates_it(name, file, line, named, tmp_path):
    """The same tree with one import added is refused, under that contract's name."""
    tree = tmp_path / "tree"
    for part in ("lm", "analysis"):
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree)
    target = tree / file
    target.write_text(target.read_text() + f"\n{line}  # noqa: E402,F401\n")
    p = lint(tree)
    assert p.returncode != 0
    assert f"{name} BROKEN" in p.stdout and named in p.stdout, p.stdout[-3000:]


def private_imports(folder: Path) -> list[str]:
    """Every import in folder's modules of a library's private module or name (a dotted part that starts with one
    underscore), as 'file:line module'."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            found += [f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] not in ("lm", "analysis")
                      and any(part.startswith("_") and not part.startswith("__") for part in n.split("."))]
    return found


def test_the_spec_imports_no_private_module_of_a_library():
    """Hydra's _internal and the like: import-linter cannot forbid part of an external package, so the settings's import
    statements are read for them."""
    assert private_imports(ROOT / "lm" / "settings") == []


def test_a_private_module_imported_by_the_spec_is_found(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "lm" / "settings", spec, ignore=shutil.ignore_patterns("__pycache__"))
    config = spec / "config.py"
    config.write_text(config.read_text() + "\nfrom hydra._internal.config_loader_impl import ConfigLoaderImpl\n")
    (spec / "extra.py").write_text("import torch.utils._python_dispatch\nfrom mlflow.tracking import _tracking_service\n")
    assert [f.split(" ")[1] for f in private_imports(spec)] == [
        "hydra._internal.config_loader_impl.ConfigLoaderImpl", "torch.utils._python_dispatch",
        "mlflow.tracking._tracking_service"]
