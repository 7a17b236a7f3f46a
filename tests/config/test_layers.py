"""The layers of lm/ and analysis/, as pyproject.toml's import-linter contracts declare them (README, "Layout")."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = str(Path(sys.executable).with_name("lint-imports"))


def lint(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([LINT, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_every_import_contract_is_kept():
    p = lint(ROOT)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "0 broken" in p.stdout


def test_a_library_module_that_imports_a_command_breaks_the_layers(tmp_path):
    """The contract can fail: the same tree with lm/model/model.py importing lm.commands.cli is refused."""
    tree = tmp_path / "tree"
    for part in ("lm", "analysis"):
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree)
    model = tree / "lm" / "model" / "model.py"
    model.write_text(model.read_text() + "\nfrom lm.commands import cli  # noqa: E402,F401\n")
    p = lint(tree)
    assert p.returncode != 0
    assert "BROKEN" in p.stdout and "lm.model.model -> lm.commands.cli" in p.stdout
