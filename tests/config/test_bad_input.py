"""Bad input to a run: one clear line before any work, exit status 2, and no MLflow store or run created."""
import subprocess
import sys

import pytest

from lm.commands import train
from tests.conftest import DATA, ROOT


@pytest.fixture
def corrupt_file(tmp_path):
    path = tmp_path / "tinyshakespeare.txt"
    path.write_bytes((DATA / "tinyshakespeare.txt").read_bytes()[:-10])
    return path


BAD = {
    "heads do not divide the width": (["model.n_embd=65"], "not divisible by model.n_head=4"),
    "a zero context": (["model.block_size=0"], "model.block_size=0 must be positive"),
    "negative layers": (["model.n_layer=-1"], "model.n_layer=-1 must be positive"),
    "no steps": (["train.steps=0"], "train.steps=0 must be positive"),
    "an unknown key": (["model.n_heads=4"], "unknown config key 'model.n_heads'"),
    "a type error": (["model.n_head=four"], "model.n_head='four' is not an integer"),
    "temperature zero": (["sample.temperature=0"], "must be above 0"),
    "negative temperature": (["sample.temperature=-1"], "must be above 0"),
    "a prompt outside the vocabulary": (["data.sample_prompt='Ωmega'"], "data.sample_prompt: 'Ω' is not in"),
    "an unquoted symbol": (["data.sample_prompt=Ωmega"], "quote a value"),
    "an unknown corpus": (["data=poems"], "data=poems: no such option"),
}


@pytest.mark.parametrize("overrides,message", BAD.values(), ids=BAD.keys())
def test_bad_input_is_one_line_and_touches_nothing(overrides, message, store, capsys):
    assert train.main(overrides) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not store.exists()     # no store, so certainly no run


def test_a_corrupt_data_file_names_the_fix_for_a_text_of_ones_own(corrupt_file, store, capsys):
    """data.path on the pinned corpus: a corrupt copy, or a text of one's own given the pinned corpus's group."""
    assert train.main([f"data.path={corrupt_file}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "SHA-256" in err and "\n" not in err and not store.exists()
    assert "the file is corrupt or not shakespeare" in err
    assert err.endswith(f"a text of your own is data=text data.path={corrupt_file}")


def test_on_the_command_line(store):
    """The same, as a user sees it: one line on stderr, exit status 2, nothing on stdout."""
    p = subprocess.run([sys.executable, "-m", "lm.commands.train", "model.n_embd=65"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == "error: model.n_embd=65 is not divisible by model.n_head=4"
