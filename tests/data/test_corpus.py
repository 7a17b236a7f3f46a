"""The corpora on the real files: the pinned bytes, the lessons' vocabulary and splits, exact baselines."""
import shutil

import pytest
import torch

from lm.model.data import DataError, TrainBatches, held_out_windows, load_corpus, locate
from lm.settings import config


@pytest.fixture(scope="module")
def shakespeare():
    return load_corpus(config.load([]).data)


@pytest.fixture(scope="module")
def names():
    return load_corpus(config.load(["data=names"]).data)


def test_shakespeare_vocabulary_and_split(shakespeare):
    assert shakespeare.vocab_size == 65 and shakespeare.chars == sorted(shakespeare.chars)
    assert len(shakespeare.train) + len(shakespeare.val) == 1_115_394
    assert len(shakespeare.train) == int(0.9 * 1_115_394)


def test_baselines_are_exact_on_the_real_file(shakespeare):
    b = shakespeare.baselines()
    assert f"{b['uniform_loss']:.3f}" == "4.174"
    assert f"{b['bigram_loss']:.3f}" == "2.482"


def test_windows_have_targets_shifted_by_one(shakespeare):
    x, y = shakespeare.batch("train", 8, 64, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (8, 64)
    assert torch.equal(x[:, 1:], y[:, :-1])


def test_batches_depend_only_on_seed_and_step(shakespeare):
    a = iter(TrainBatches(shakespeare, 4, 16, seed=1))
    first = [next(a) for _ in range(5)]
    resumed = next(iter(TrainBatches(shakespeare, 4, 16, seed=1, start_step=3)))
    assert torch.equal(resumed[0], first[3][0])
    assert not torch.equal(next(iter(TrainBatches(shakespeare, 4, 16, seed=2)))[0], first[0][0])


@pytest.mark.parametrize("context", [1, 16, 64, 128])
def test_the_final_validation_covers_every_window_of_the_held_out_tenth_once(shakespeare, context):
    """Non-overlapping windows of the context, in order, the last one shorter: every character of the held-out text
    after its first is a target exactly once, read from the characters before it in its window."""
    batches = held_out_windows(shakespeare, context)
    x = torch.cat([b[0].flatten() for b in batches])
    y = torch.cat([b[1].flatten() for b in batches])
    assert torch.equal(y, shakespeare.val[1:]) and torch.equal(x, shakespeare.val[:-1])
    assert all(b[0].size(1) == context for b in batches[:-1]) and batches[-1][0].size(1) <= context
    assert sum(len(b[0]) for b in batches) == -(-(len(shakespeare.val) - 1) // context)   # windows, rounded up
    assert held_out_windows(shakespeare, context)[3][1].equal(batches[3][1])             # the same for every run


def test_the_final_validation_of_documents_reads_every_held_out_name(names):
    x, y = (torch.cat(t) for t in zip(*held_out_windows(names, 16)))
    assert len(x) == len(names.val) and (x[:, 0] == names.bos).all()
    assert (y >= 0).sum() == (names.val[:, 1:17] >= 0).sum()          # every target a context of 16 reaches


@pytest.mark.parametrize("corpus", ["shakespeare", "names"])
def test_a_toy_runs_final_validation_reads_the_first_windows_of_the_same_held_out_text(corpus, request):
    """eval.final_windows=n (the quick suite's 64): the first n of the windows a full run reads, in the same order,
    so two toy runs still pair window by window; the quick suite sets it."""
    from lm.suite.settings import QUICK_OVERRIDES

    data = request.getfixturevalue(corpus)
    def windows(batches):   # (x, y), every window of the whole context, in order
        return [torch.cat([b[i] for b in batches if b[0].size(1) == 16]) for i in (0, 1)]

    every, first = windows(held_out_windows(data, 16)), windows(held_out_windows(data, 16, limit=300))
    assert len(first[0]) == 300 and all(torch.equal(a[:300], b) for a, b in zip(every, first))
    assert "eval.final_windows=64" in QUICK_OVERRIDES


def test_names_are_documents_wrapped_in_bos(names):
    assert names.vocab_size == 27 and names.bos == 26
    assert len(names.train) + len(names.val) == 32_033   # 32,033 names; the file's last line has no newline
    x, y = names.batch("train", 16, 16, torch.Generator().manual_seed(0))
    assert (x[:, 0] == names.bos).all()                   # every name starts after BOS
    for row_x, row_y in zip(x, y):
        n = int((row_y >= 0).sum())
        assert row_y[n - 1] == names.bos                  # and its last target is BOS, then padding
        assert torch.equal(row_x[1:n], row_y[: n - 1])
    assert names.baselines()["uniform_loss"] == pytest.approx(3.2958, abs=1e-4)


def test_prompt_outside_the_vocabulary(shakespeare):
    with pytest.raises(ValueError, match="not in the 65-character vocabulary"):
        shakespeare.encode("To be — or not")


def corrupt(tmp_path, how):
    good = locate(config.load([]).data).read_bytes()
    bad = {"truncated": good[:100_000], "flipped": good[:500] + b"X" + good[501:], "empty": b""}[how]
    path = tmp_path / "tinyshakespeare.txt"
    path.write_bytes(bad)
    return path


@pytest.mark.parametrize("how", ["truncated", "flipped", "empty"])
def test_a_damaged_file_is_refused_with_one_line(tmp_path, how):
    path = corrupt(tmp_path, how)
    with pytest.raises(DataError) as e:
        load_corpus(config.load([f"data.path={path}"]).data)
    assert "SHA-256" in str(e.value) and "\n" not in str(e.value)


def test_a_missing_file_with_no_network_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("TINYGPT_DATA_DIR")
    cfg = config.load([f"data.cache_dir={tmp_path}", "data.url=http://127.0.0.1:9/input.txt"]).data
    with pytest.raises(DataError, match="could not download .* TINYGPT_DATA_DIR"):
        locate(cfg)
    assert not list(tmp_path.iterdir())   # no half-written file left behind


def test_the_download_cache_is_verified(tmp_path, monkeypatch):
    """A file already in the cache is used only if its hash is right."""
    shutil.copy(locate(config.load([]).data), tmp_path / "tinyshakespeare.txt")
    monkeypatch.delenv("TINYGPT_DATA_DIR")
    assert locate(config.load([f"data.cache_dir={tmp_path}"]).data) == tmp_path / "tinyshakespeare.txt"
    (tmp_path / "tinyshakespeare.txt").write_text("not shakespeare")
    with pytest.raises(DataError, match="delete it"):
        locate(config.load([f"data.cache_dir={tmp_path}"]).data)
