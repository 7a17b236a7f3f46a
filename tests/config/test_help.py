"""Help where people look: `make help` from the Makefile's comments, `tinygpt` and its subcommands, and --help on
the commands that read their options only after their imports (decide, calibrate). The other commands' --help,
before any heavy import: tests/config/test_fast_feedback.py."""
import importlib
import re
import subprocess
import sys
import tomllib

import pytest

from lm.commands import main as tinygpt
from tests.conftest import ROOT, user_env


def test_make_help_lists_every_target_with_its_comment():
    makefile = (ROOT / "Makefile").read_text()
    targets = re.findall(r"^([a-z][a-z-]*):.*## (.*)$", makefile, re.M)
    p = subprocess.run(["make", "-s", "help"], cwd=ROOT, env=user_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    listed = dict(re.findall(r"^  (\S+)\s+(.*)$", p.stdout, re.M))
    assert {"train", "ablations", "report", "test", "schema", "help"} <= set(listed)
    assert listed == dict(targets)


def test_tinygpt_lists_its_commands_and_runs_one(capsys):
    assert tinygpt.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in tinygpt.COMMANDS)
    assert tinygpt.main(["reprot"]) == 2
    assert "did you mean report?" in capsys.readouterr().err
    assert tinygpt.main(["sample", "temperature=0"]) == 2   # the subcommand's own check, key=value kept
    assert "must be above 0" in capsys.readouterr().err
    assert tinygpt.main(["sample", "--help"]) == 0
    assert "temperature=0.8" in capsys.readouterr().out


def test_every_tinygpt_command_is_a_module_and_the_console_script_resolves():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["tinygpt"].partition(":")
    assert getattr(importlib.import_module(module), function) is tinygpt.main
    for name, (target, _, _) in tinygpt.COMMANDS.items():
        assert importlib.util.find_spec(target) is not None, name


def test_tinygpt_on_the_command_line():
    p = subprocess.run([sys.executable, "-m", "lm.commands.main", "--help"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and "usage: tinygpt COMMAND" in p.stdout


@pytest.mark.parametrize("module,option", [("analysis.decide", "budget=''"), ("analysis.calibration", "tables=10000")])
def test_help_on_the_commands_that_read_their_options_after_their_imports(module, option):
    p = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and option in p.stdout, p.stdout + p.stderr
