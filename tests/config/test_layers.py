"""The layers of lm/ and analysis/, as pyproject.toml's import-linter contracts declare them (README, "Layout"), and
each contract shown to fail on an injected violation."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = str(Path(sys.executable).with_name("lint-imports"))
NO_IO = "the spec does no I/O: no network, database or other process"
LIGHT = ("what a command reads before its heavy imports (the spec, the head-statistics and knock-out tables, the "
         "store check) imports no torch, Lightning, MLflow, pandas, seaborn or matplotlib")
LAYERS = ("lm is in layers: commands and tools over the suite, one run, the measures, tracking, the head statistics "
          "and knock-out, the model, the spec")


def lint(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([LINT, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300)


def with_line(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of lm/, analysis/ and pyproject.toml in which `module` (a path under the root) ends with `line`."""
    tree = tmp_path / "tree"
    for part in ("lm", "analysis"):
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree)
    path = tree / module
    path.write_text(path.read_text() + f"\n{line}  # noqa: E402,F401\n")
    return tree


def broken(p: subprocess.CompletedProcess) -> str:
    """lint-imports's report of the broken contracts, its line wrapping undone."""
    assert p.returncode != 0, p.stdout[-2000:]
    return " ".join(p.stdout.partition("Broken contracts")[2].split())


def test_every_import_contract_is_kept():
    p = lint(ROOT)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "0 broken" in p.stdout


@pytest.mark.parametrize("module, line, contract, chain", [
    # a library module that imports a command
    ("lm/model/model.py", "from lm.commands import cli", LAYERS, "lm.model.model -> lm.commands.cli"),
    # the knock-out and the head statistics are side by side: neither imports the other
    ("lm/knockout/summary.py", "from lm.heads import summary", LAYERS, "lm.knockout.summary -> lm.heads.summary"),
    # the spec downloading, querying a database, starting a process
    ("lm/spec/schema.py", "import urllib.request", NO_IO, "lm.spec.schema -> urllib"),
    ("lm/spec/exercises.py", "import sqlite3", NO_IO, "lm.spec.exercises -> sqlite3"),
    ("lm/spec/config.py", "import subprocess", NO_IO, "lm.spec.config -> subprocess"),
    # what a command reads before its heavy imports, importing one
    ("lm/heads/table.py", "import torch", LIGHT, "lm.heads.table -> torch"),
    ("lm/knockout/table.py", "import pandas", LIGHT, "lm.knockout.table -> pandas"),
    ("lm/tracking/store_check.py", "import mlflow", LIGHT, "lm.tracking.store_check -> mlflow"),
    ("lm/spec/options.py", "from lm.model import model", LIGHT, "lm.model.model -> torch"),
])
def test_each_contract_fails_on_an_injected_violation_and_names_it(tmp_path, module, line, contract, chain):
    report = broken(lint(with_line(tmp_path, module, line)))
    assert contract in report and chain in report, report[:3000]


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
    """Hydra's _internal and the like: import-linter cannot forbid part of an external package, so the spec's import
    statements are read for them."""
    assert private_imports(ROOT / "lm" / "spec") == []


def test_a_private_module_imported_by_the_spec_is_found(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "lm" / "spec", spec, ignore=shutil.ignore_patterns("__pycache__"))
    config = spec / "config.py"
    config.write_text(config.read_text() + "\nfrom hydra._internal.config_loader_impl import ConfigLoaderImpl\n")
    (spec / "extra.py").write_text("import torch.utils._python_dispatch\nfrom mlflow.tracking import _tracking_service\n")
    assert [f.split(" ")[1] for f in private_imports(spec)] == [
        "hydra._internal.config_loader_impl.ConfigLoaderImpl", "torch.utils._python_dispatch",
        "mlflow.tracking._tracking_service"]
