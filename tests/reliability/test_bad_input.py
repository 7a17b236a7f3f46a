"""Bad input, every kind in one list, through the commands a user types (`python -m lm.commands.suite`,
`python -m lm.commands.train`, and the key=value options of heads, report and bench):
exit status 2, one line on stderr starting `error:`, nothing on stdout, no work started, no run created and the
store untouched, down to its files' modification times."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lm.commands import suite as suite_command
from lm.commands import train as train_command
from lm.run import train
from lm.suite.launchers import local
from tests.conftest import DATA
from tests.reliability import harness

SHAKESPEARE = DATA / "tinyshakespeare.txt"
QUICK = ["quick=true", "ablations=[baseline]"]


def corrupt(tmp):  # the right length, some bytes changed
    data = bytearray(SHAKESPEARE.read_bytes())
    data[1000:1010] = b"XXXXXXXXXX"
    (tmp / "corrupt.txt").write_bytes(bytes(data))
    return tmp / "corrupt.txt"


def truncated(tmp):
    (tmp / "truncated.txt").write_bytes(SHAKESPEARE.read_bytes()[:500_000])
    return tmp / "truncated.txt"


def empty_dir(tmp, name="empty"):
    (tmp / name).mkdir(exist_ok=True)
    return tmp / name


def unwritable_store(tmp):
    """A store folder this process cannot write. Root writes anywhere, so for root: a path through a file."""
    if os.geteuid() != 0:
        folder = empty_dir(tmp, "read-only")
        folder.chmod(0o555)
        return folder
    (tmp / "a-file").write_text("")
    return tmp / "a-file" / "store"


def not_a_database(tmp):
    folder = empty_dir(tmp, "garbage")
    (folder / "mlflow.db").write_bytes(b"this is not an SQLite database\n" * 100)
    return folder


# id: (command, arguments, environment, what the one line must say). In the arguments and the environment,
# {tmp} is a fresh folder, {killed} the id of a run stopped by Ctrl-C with its checkpoint, a callable a file made.
CASES = {
    # the data
    "data file corrupt": ("suite", [*QUICK, "overrides=['data.path={corrupt}']"], {}, "SHA-256"),
    "data file truncated": ("train", ["data.path={truncated}"], {}, "the file is corrupt"),
    "a text of one's own on the pinned corpus": ("train", ["data.path={truncated}"], {},
                                                 "a text of your own is data=text data.path="),
    "data file with the wrong hash": ("train", ["data.sha256=" + "0" * 64], {}, "expected 000000000000"),
    "data file missing, no network": ("train", ["data.cache_dir={tmp}/cache"],
                                      {"TINYGPT_DATA_DIR": None, "https_proxy": "http://127.0.0.1:9",
                                       "HTTPS_PROXY": "http://127.0.0.1:9", "no_proxy": None, "NO_PROXY": None},
                                      "with no network, put tinyshakespeare.txt in"),
    "data file missing from TINYGPT_DATA_DIR": ("suite", QUICK, {"TINYGPT_DATA_DIR": empty_dir},
                                                "tinyshakespeare.txt not found at"),
    # the config
    "config key that does not exist": ("train", ["model.n_heads=4"], {}, "unknown config key 'model.n_heads'"),
    "config key that does not exist, suite": ("suite", [*QUICK, "model.n_heads=4"], {},
                                              "unknown config key 'model.n_heads'"),
    "type error n_head=four": ("train", ["model.n_head=four"], {}, "model.n_head='four' is not an integer"),
    "type error seeds=three": ("suite", ["seeds=three"], {}, "seeds='three' is not an integer"),
    "n_embd=65 with n_head=4": ("train", ["model.n_embd=65"], {}, "model.n_embd=65 is not divisible by model.n_head=4"),
    "block_size=0": ("suite", [*QUICK, "overrides=['model.block_size=0']"], {}, "model.block_size=0 must be positive"),
    "unknown ablation": ("suite", ["ablations=[baseline,nosuch]"], {}, "unknown ablation 'nosuch'"),
    "temperature 0": ("train", ["sample.temperature=0"], {}, "sample.temperature=0.0 must be above 0"),
    "temperature below 0": ("suite", [*QUICK, "overrides=['sample.temperature=-0.5']"], {}, "must be above 0"),
    "prompt outside the vocabulary": ("train", ["data.sample_prompt='Ωmega'"], {},
                                      "data.sample_prompt: 'Ω' is not in the 65-character vocabulary"),
    "probe outside the vocabulary": ("train", ["data.probe='€'"], {}, "data.probe: '€' is not in"),
    # checkpoints and runs
    "checkpoint from a different config": ("train", [*harness.TINY, "model.n_head=8", "--resume", "{killed}"], {},
                                           "that run and its checkpoint have another config"),
    "resume a run that does not exist": ("train", [*harness.TINY, "--resume", "0" * 32], {}, "no such run"),
    # the tracking store
    "tracking server unreachable": ("train", [], {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"},
                                    "cannot reach the MLflow server at http://127.0.0.1:9"),
    "tracking URI unreachable, suite": ("suite", [*QUICK, "tracking_uri=http://127.0.0.1:9"], {},
                                        "cannot reach the MLflow server"),
    "tracking URI a plain folder": ("train", ["tracking.uri={tmp}/runs"], {}, "is a plain folder"),
    "store folder not writable": ("suite", QUICK, {"TINYGPT_STORE": unwritable_store}, "is not writable"),
    "store file not a database": ("train", [], {"TINYGPT_STORE": not_a_database}, "cannot open the tracking store"),
    # the same through a real process: what a terminal shows, import-time noise included
    "python -m lm.commands.suite, unknown ablation": ("suite-cli", ["ablations=[nosuch]"], {}, "unknown ablation 'nosuch'"),
    "python -m lm.commands.train, checkpoint from a different config": (
        "train-cli", [*harness.TINY, "model.n_head=8", "--resume", "{killed}"], {}, "another config"),
    # every other command's key=value options, through one parser (lm/settings/options.py)
    "make heads force=ture": ("heads-cli", ["exercise=baseline", "force=ture"], {}, "did you mean force=true?"),
    "make heads quik=true": ("heads-cli", ["exercise=baseline", "quik=true"], {}, "did you mean quick=true?"),
    "make report quik=true": ("report-cli", ["quik=true"], {}, "did you mean quick=true?"),
    "make report quick=ture": ("report-cli", ["quick=ture"], {}, "did you mean quick=true?"),
    "make bench quik=true": ("bench-cli", ["quik=true"], {}, "did you mean quick=true?"),
    "make bench threads=two": ("bench-cli", ["threads=two"], {}, "threads='two' is not a whole number"),
}
CLI = {"suite-cli": "lm.commands.suite", "train-cli": "lm.commands.train", "heads-cli": "lm.commands.heads",
       "report-cli": "analysis.report", "bench-cli": "lm.tools.bench"}


@pytest.fixture(scope="module")
def killed(interrupted_train):
    """The store every case runs against: one run in it, stopped by Ctrl-C, with its checkpoint."""
    store, o = interrupted_train
    assert o.rc == 130, o.err[-3000:]
    return store, re.search(r"RESUME=(\w+)", o.err)[1]


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_bad_input_is_refused_clearly_before_any_work(case, killed, tmp_path, monkeypatch, capsys):
    command, args, env, message = CASES[case]
    store, run_id = killed

    def fill(v):  # {tmp}: a fresh folder; {killed}: the run's id; {corrupt}, {truncated}: those files, made
        if callable(v):
            return str(v(tmp_path))
        made = {"tmp": lambda: str(tmp_path), "killed": lambda: run_id,
                "corrupt": lambda: str(corrupt(tmp_path)), "truncated": lambda: str(truncated(tmp_path))}
        return re.sub(r"\{(\w+)\}", lambda m: made[m[1]](), v)

    args = [fill(a) for a in args]
    environment = {"TINYGPT_STORE": str(store), "MLFLOW_TRACKING_URI": None,
                   **{k: None if v is None else fill(v) for k, v in env.items()}}
    watched = {store, Path(environment["TINYGPT_STORE"])}  # the store, and the broken one a case may point at
    before = {p: harness.snapshot(p) for p in watched}

    if command.endswith("-cli"):
        e = harness.env(store)
        for k, v in environment.items():
            e.pop(k, None) if v is None else e.__setitem__(k, v)
        p = subprocess.run([sys.executable, "-m", CLI[command], *args], cwd=harness.ROOT, env=e,
                           capture_output=True, text=True, timeout=300)
        rc, out, err = p.returncode, p.stdout, p.stderr
    else:
        for k, v in environment.items():
            monkeypatch.delenv(k, raising=False) if v is None else monkeypatch.setenv(k, v)

        def no_work(*a, **k):
            raise AssertionError("work started")

        monkeypatch.setattr(local.LocalPool, "start", no_work)
        monkeypatch.setattr(train, "execute", no_work)
        rc = (suite_command.main if command == "suite" else train_command.main)(args)
        out, err = capsys.readouterr()

    lines = [ln for ln in err.splitlines() if ln.strip()]
    after = {p: harness.snapshot(p) for p in watched}
    problems = [w for w, bad in [
        (f"exit status {rc}, not 2", rc != 2),
        (f"{len(lines)} lines on stderr, not one: {lines[:5]}", len(lines) != 1),
        (f"stderr does not start with 'error:': {err[:300]!r}", not err.startswith("error: ")),
        (f"the line does not say {message!r}: {err[:300]!r}", message not in err),
        (f"stdout is not empty: {out[:300]!r}", out.strip() != ""),
        ("the store changed", before != after),
    ] if bad]
    harness.record("bad_input", **{case: "refused clearly" if not problems else "; ".join(problems)})
    assert not problems, problems
