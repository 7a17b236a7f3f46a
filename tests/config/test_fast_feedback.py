"""Every command checks its input before it imports anything heavy: a mistake, or --cfg, never loads torch,
Lightning, MLflow, pandas or seaborn (5 to 6 s of imports). The time itself is a row of `make bench`."""
import os
import re
import subprocess
import sys

import pytest
import yaml

from tests.conftest import ROOT

HEAVY = ("torch", "pytorch_lightning", "lightning", "mlflow", "pandas", "seaborn", "matplotlib")

COMMANDS = {
    "train, a bad value": (["lm.commands.train", "model.n_head=0"], 2, "error: model.n_head=0 must be positive"),
    "train, an unknown key": (["lm.commands.train", "model.n_heads=4"], 2, "error: unknown config key 'model.n_heads'"),
    "train, a run that does not exist": (["lm.commands.train", "--resume", "0" * 32], 2, "no such run"),
    "train, a malformed sweep": (["lm.commands.train", "-m", "model.n_head=1,,2"], 2, "error: malformed sweep"),
    "train --cfg": (["lm.commands.train", "--cfg", "model.n_head=2"], 0, "n_head: 2"),
    "suite, an unknown exercise": (["lm.commands.suite", "ablations=[nosuch]"], 2, "error: unknown ablation 'nosuch'"),
    "suite, a bad value in every run": (["lm.commands.suite", "quick=true", "model.block_size=0"], 2,
                                        "model.block_size=0 must be positive"),
    "suite, a bare switch (Hydra takes key=value)": (["lm.commands.suite", "quick"], 2,
                                                     "error: 'quick' is not key=value: write quick=true"),
    "suite --cfg": (["lm.commands.suite", "--cfg", "quick=true", "ablations=[heads]"], 0, "quick/heads/h8/seed1"),
    "sample, no store": (["lm.commands.sample", "run=deadbeef"], 2, "error: no store at "),
    "sample, temperature 0": (["lm.commands.sample", "temperature=0"], 2, "must be above 0"),
    "report, an unknown exercise": (["analysis.report", "ablations=[nosuch]"], 2, "unknown ablation 'nosuch'"),
    "report, no store": (["analysis.report"], 1, "no MLflow store at"),
    "ui, a bad port": (["lm.commands.ui", "port=99999"], 2, "port=99999 is not a port (1-65535): make ui PORT=5001"),
    "ui, the old --port flag": (["lm.commands.ui", "--port", "5001"], 2, "options are key=value: port=5001"),
    # one parser for every command's key=value options (lm/settings/options.py): a misspelt key, a value of the wrong
    # type, each named with its fix
    "heads, a misspelt true": (["lm.commands.heads", "run=x", "force=ture"], 2,
                               "error: force='ture' is not true or false: did you mean force=true?"),
    "heads, neither run nor exercise": (["lm.commands.heads", "quick=true"], 2, "give one of run=RUN_ID"),
    "heads, an unknown exercise": (["lm.commands.heads", "exercise=nosuch"], 2, "unknown ablation 'nosuch'"),
    "report, a misspelt key": (["analysis.report", "quik=true"], 2,
                               "error: unknown option 'quik=true': did you mean quick=true?"),
    "report, a misspelt true": (["analysis.report", "quick=ture"], 2, "did you mean quick=true?"),
    "bench, a misspelt key": (["lm.tools.bench", "quik=true"], 2,
                              "error: unknown option 'quik=true': did you mean quick=true?"),
    "bench, a misspelt true": (["lm.tools.bench", "quick=ture"], 2, "did you mean quick=true?"),
    "bench, an unknown section": (["lm.tools.bench", "only=startup,nosuch"], 2, "'nosuch' is not one of train,"),
    "gpu-check, a misspelt switch": (["lm.tools.gpucheck", "quik"], 2, "did you mean quick=true?"),
    # --help on every command: its options, each with its default, and exit status 0
    **{f"{argv[0]} --help": ([*argv, "--help"], 0, said) for argv, said in [
        (["lm.commands.train"], "model.*"), (["lm.commands.suite"], "workers=0"), (["lm.commands.sample"], "seed=1"),
        (["lm.commands.heads"], "force=false"), (["lm.commands.ui"], "port=5000"), (["analysis.report"], "quick=false"),
        (["analysis.runs"], "out=reports"), (["lm.tools.bench"], "threads=0"),
        (["lm.tools.gpucheck"], "large_seconds=180.0"),
        (["lm.commands.main"], "ablations")]},
    "suite, a misspelt suite option": (["lm.commands.suite", "worker=2"], 2,
                                       "error: unknown option 'worker': did you mean workers="),
    "train, a misspelt key": (["lm.commands.train", "model.n_embed=96"], 2,
                              "error: unknown config key 'model.n_embed' (did you mean model.n_embd?)"),
    "sample, a number that is not": (["lm.commands.sample", "length=many"], 2, "length='many' is not a whole number"),
}


@pytest.mark.parametrize("argv,code,message", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_command_answers_before_its_heavy_imports(argv, code, message, tmp_path):
    env = {**os.environ, "TINYGPT_STORE": str(tmp_path / "mlruns")}
    env.pop("MLFLOW_TRACKING_URI", None)
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", *argv], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120)
    imported = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", p.stderr, re.M))
    said = "\n".join(ln for ln in p.stderr.splitlines() if not ln.startswith("import time:")) + p.stdout
    assert p.returncode == code and message in said, said[-2000:]
    assert code == 0 or len([ln for ln in said.splitlines() if ln.strip()]) == 1, said[-2000:]
    assert not {m.split(".")[0] for m in imported} & set(HEAVY)
    assert not (tmp_path / "mlruns").exists()


def test_make_train_cfg_prints_the_resolved_config():
    """The README's `make train ARGS="--cfg"`."""
    p = subprocess.run(["make", "-s", "train", "ARGS=--cfg model.n_layer=3"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    cfg = yaml.safe_load(p.stdout)
    assert p.returncode == 0 and cfg["model"]["n_layer"] == 3 and cfg["train"]["steps"] == 3000


def test_the_collector_is_off_through_a_commands_heavy_imports_and_back_on_frozen_after(monkeypatch):
    import gc

    from lm import process

    monkeypatch.setattr(sys, "argv", ["lm.commands.train"])
    frozen = gc.get_freeze_count()
    try:
        process.before_imports(lambda argv: None)  # a check that lets the work start
        assert not gc.isenabled() and process._asked is not None   # and the unused packages hidden
        process.after_imports()
        assert gc.isenabled() and gc.get_freeze_count() > frozen and process._asked is None
        process.after_imports()  # once the collector is on, a no-op
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_the_collector_is_off_through_a_block_of_heavy_imports_and_back_on_frozen_after():
    import gc

    from lm import process

    frozen = gc.get_freeze_count()
    try:
        with process.heavy_imports():
            assert not gc.isenabled()
            import json  # noqa: F401
        assert gc.isenabled() and gc.get_freeze_count() > frozen
        gc.disable()   # inside a command's own block: left as it was
        with process.heavy_imports():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_suite_worker_starts_with_its_imports_frozen_and_mlflows_sqlite_store_loaded():
    """The fork server's preload (lm/suite/preload.py), as a worker forked from it finds it: the collector on, what
    the imports made frozen, and the store module a first run would have imported (0.58 s) already there."""
    look = ("__import__('gc').isenabled(), __import__('gc').get_freeze_count() > 100_000, "
            "'mlflow.store.tracking.sqlalchemy_store' in __import__('sys').modules, "
            "'lm.run.train' in __import__('sys').modules")
    code = ("import multiprocessing as mp\n"
            "ctx = mp.get_context('forkserver')\n"
            "ctx.set_forkserver_preload(['lm.suite.preload'])\n"
            f"with ctx.Pool(1) as pool:\n    print(*pool.apply(eval, ({look!r},)))\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["True"] * 4, p.stdout


def test_every_command_that_turns_the_collector_off_turns_it_back_on_before_its_work():
    """before_imports at a command's top, after_imports in its closing `__main__` block, past every import."""
    checked = []
    for path in sorted([*(ROOT / "lm").rglob("*.py"), *(ROOT / "analysis").rglob("*.py")]):
        source = path.read_text()
        if "process.before_imports(" not in source or path.name == "process.py":
            continue
        checked.append(path.parent.name if path.stem == "__main__" else path.stem)  # a package's: its name
        closing = source.rsplit('if __name__ == "__main__":', 1)[1]
        assert "process.after_imports()" in closing and closing.index("after_imports") < closing.index("main("), path
    assert {"train", "sample", "heads", "report"} <= set(checked)


def test_a_runs_imports_load_neither_scipy_signal_nor_matplotlib_and_leave_later_checks_true():
    """torchmetrics, which Lightning imports, loads both when lightning_utilities says they are installed (0.6 s,
    lm/process.py); through a command's imports it says no, and after them the truth again."""
    code = ("import sys; from lm import process; process.hide_unused(); import lm.run.train; process.show_unused(); "
            "from lightning_utilities.core.imports import RequirementCache, package_available; "
            "print(sorted(m for m in ('scipy.signal', 'matplotlib') if m in sys.modules), "
            "package_available('scipy'), bool(RequirementCache('matplotlib')), bool(RequirementCache('scipy')))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["[]", "True", "True", "True"], p.stdout
