"""The same environment everywhere: requirements.lock pins every package the code imports and everything those need,
with hashes; pyproject.toml declares what is imported and bounds torch and submitit to the tested versions; `make`
builds the environment from the lock. (A fresh environment from the lock is built outside the tests: docs/server.md.)
"""
import ast
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"
OURS = {"lm", "analysis", "tests"}


def locked() -> dict[str, tuple[str, int]]:
    """Each package the lock pins: its version and how many hashes it allows."""
    text = LOCK.read_text()
    pins = {}
    for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)((?:\s*\\\n\s*--hash=sha256:[0-9a-f]{64})*)", text, re.M):
        pins[canonicalize_name(m[1])] = (m[2], m[3].count("--hash=sha256:"))
    return pins


def imported_distributions() -> dict[str, set[str]]:
    """distribution → the files of lm/, analysis/ and tests/ that import it (by their import statements)."""
    modules = packages_distributions()
    found: dict[str, set[str]] = {}
    for folder in OURS:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for top in {n.split(".")[0] for n in names} - OURS - set(sys.stdlib_module_names):
                    dists = modules.get(top)
                    assert dists, f"{path.relative_to(ROOT)} imports {top}, which no installed distribution provides"
                    # mlflow's modules come from three distributions; the one of the module's own name stands for it
                    dist = next((d for d in dists if canonicalize_name(d) == canonicalize_name(top)), dists[0])
                    found.setdefault(canonicalize_name(dist), set()).add(str(path.relative_to(ROOT)))
    return found


def declared() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    return {canonicalize_name(r.name): r for r in map(Requirement, reqs)}


def needs(name: str, seen: set[str] | None = None) -> set[str]:
    """The distribution and every distribution it requires, as installed (markers evaluated, extras left out)."""
    seen = set() if seen is None else seen
    if name in seen:
        return seen
    seen.add(name)
    env = {**default_environment(), "extra": ""}
    for spec in distribution(name).requires or []:
        req = Requirement(spec)
        if req.marker is None or req.marker.evaluate(env):
            needs(canonicalize_name(req.name), seen)
    return seen


def test_every_distribution_the_code_imports_is_declared_and_locked_with_what_it_needs():
    imported, pins, decl = imported_distributions(), locked(), declared()
    assert {"torch", "numpy", "scipy", "pyyaml", "submitit", "mlflow"} <= set(imported)   # the scan sees them
    undeclared = {d: sorted(files)[:3] for d, files in imported.items() if d not in decl and not (
        d.startswith("mlflow") and "mlflow" in decl)}
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"
    wanted = set().union(*(needs(d) for d in {*imported, *decl}))
    assert not wanted - set(pins), f"not pinned in requirements.lock: {sorted(wanted - set(pins))}"
    assert all(hashes for _, hashes in pins.values()), [n for n, (_, h) in pins.items() if not h]


def test_the_tests_run_on_the_versions_the_lock_pins():
    pins = locked()
    for name in imported_distributions():
        assert distribution(name).version == pins[name][0], (name, distribution(name).version, pins[name][0])


def test_torch_is_bounded_and_submitit_pinned_to_the_versions_that_are_tested():
    decl, pins = declared(), locked()
    torch, submitit = decl["torch"].specifier, decl["submitit"].specifier
    tested = Version(pins["torch"][0])
    assert torch.contains(tested) and not torch.contains(f"{tested.major}.{tested.minor + 1}.0")
    assert not torch.contains(f"{tested.major}.{tested.minor - 1}.0")
    # lm/suite/launchers/submitit.py uses submitit's private internals: exactly the version tested.
    assert [(s.operator, s.version) for s in submitit] == [("==", pins["submitit"][0])]


def make_dry_run(venv: Path, *what_if: str) -> str:
    """The commands `make` would run to bring the environment in venv up to date, had the files what_if changed."""
    out = subprocess.run(["make", "-n", *(f"-W{f}" for f in what_if), f"VENV={venv}", f"{venv}/.installed"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_make_builds_the_environment_from_the_lock_and_again_when_the_lock_changes(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").touch()
    os.utime(venv / ".installed", (4e9, 4e9))       # newer than any file of the project
    assert "is up to date" in make_dry_run(venv)
    steps = make_dry_run(venv, "requirements.lock")
    installs = [ln for ln in steps.splitlines() if " -m pip install" in ln]
    assert installs[1:] == [f"{venv}/bin/python -m pip install -q --require-hashes -r requirements.lock",
                            f"{venv}/bin/python -m pip install -q --no-deps --no-build-isolation -e ."], installs
    assert make_dry_run(venv, "pyproject.toml") == steps
