"""The measurements verdicts rest on, each against its definition on a small real model and the real corpora."""
import math

import pytest
import torch
from torch.nn import functional as F

from lm.heads import measure as head_measure
from lm.measures import probes
from lm.model.data import load_corpus
from lm.run.datamodule import CorpusDataModule
from lm.model.model import GPT, GPTConfig, KVCache
from lm.model.sample import line_length, speaker_line_share
from lm.run.module import honest_loss
from lm.settings import config


def tiny(**kw) -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=11, block_size=12, n_layer=2, n_head=2, n_embd=16, **kw)).eval()


def windows(n=3, T=12, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(11, (n, T), generator=g)
    y = torch.randint(11, (n, T), generator=g)
    y[0, -3:] = -1          # padding after a document's end carries no loss
    return x, y


@pytest.mark.parametrize("mask", [True, False])
def test_honest_loss_is_the_loss_of_each_prefix_run_alone(mask):
    model = tiny(mask=mask)
    x, y = windows()
    total, count = 0.0, 0
    with torch.no_grad():
        for b in range(x.size(0)):
            for t in range(x.size(1)):
                if y[b, t] < 0:
                    continue
                logits, _ = model(x[b:b + 1, :t + 1])          # the prefix alone, nothing after it
                total += F.cross_entropy(logits[0, -1:], y[b, t:t + 1]).item()
                count += 1
        assert honest_loss(model, x, y) == pytest.approx(total / count, rel=1e-5)
        _, as_trained = model(x, y)
    # With the mask, the prefix alone is what each position saw anyway; without it the model read its answers.
    assert (honest_loss(model, x, y) == pytest.approx(as_trained.item(), rel=1e-5)) == mask


def test_loss_by_position_is_each_positions_mean_loss_and_averages_to_the_validation_loss():
    model = tiny()
    batches = [windows(seed=s) for s in (1, 2)]
    out = probes.validation(model, batches)
    x, y = (torch.cat(t) for t in zip(*batches))
    with torch.no_grad():
        logits, _ = model(x)
    losses = F.cross_entropy(logits.transpose(1, 2), y, ignore_index=-1, reduction="none")   # (B, T)
    real = (y >= 0).float()
    expected = (losses * real).sum(0) / real.sum(0)
    assert out["loss_by_position"] == pytest.approx(expected.tolist(), rel=1e-5)
    assert out["val_loss"] == pytest.approx(((losses * real).sum() / real.sum()).item(), rel=1e-5)
    assert out["val_perplexity"] == pytest.approx(math.exp(out["val_loss"]))
    # the last position has lost its padded window, so it is not the plain mean over every window
    assert out["loss_by_position"][-1] != pytest.approx(losses[:, -1].mean().item(), rel=1e-6)


def test_validation_gives_its_standard_error_over_the_windows():
    """Issue 23, defect 5: every run is scored on the same windows; their error is logged with the loss."""
    model = tiny()
    batches = [windows(n=5, seed=s) for s in (1, 2)]
    for _, y in batches:
        y[y < 0] = 3                                       # 10 full windows, no padding
    out = probes.validation(model, batches)
    x, y = (torch.cat(t) for t in zip(*batches))
    with torch.no_grad():
        losses = F.cross_entropy(model(x)[0].transpose(1, 2), y, reduction="none").double()   # (B, T)
    per_window = losses.mean(1)
    assert out["val_loss_se"] == pytest.approx((per_window.std() / math.sqrt(10)).item(), rel=1e-6)
    assert out["loss_by_position_se"] == pytest.approx((losses.std(0) / math.sqrt(10)).tolist(), rel=1e-6)


def test_attention_at_init_shows_lesson_000s_case_for_the_scaling():
    """Lesson 000: d_head = 16 gives q·k a spread of about √16 = 4; divided by √16, about 1."""
    torch.manual_seed(0)
    c = dict(vocab_size=65, block_size=64, n_layer=2, n_head=4, n_embd=64)
    x = torch.randint(65, (8, 64))
    scaled = probes.attention_at_init(GPT(GPTConfig(**c)).eval(), x)
    torch.manual_seed(0)
    unscaled = probes.attention_at_init(GPT(GPTConfig(**c, scale_attn=False)).eval(), x)
    # the same weights: q·k spreads alike (block 2 reads block 1's different output, so not to the digit)
    assert scaled["init_qk_std"] == pytest.approx(unscaled["init_qk_std"], rel=0.1)
    assert 3 < unscaled["init_score_std"] < 5 and 0.75 < scaled["init_score_std"] < 1.25
    assert unscaled["init_max_weight"] > scaled["init_max_weight"]
    assert unscaled["init_entropy"] < scaled["init_entropy"]


def test_the_unscaled_toggle_changes_training_and_analysis_paths_alike():
    model = tiny(scale_attn=False)
    x, _ = windows()
    with torch.no_grad():
        fast, _ = model(x)
        slow, maps = model.attention_maps(x)
    assert torch.allclose(fast, slow, atol=1e-5)
    assert not torch.allclose(fast, tiny()(x)[0], atol=1e-3)
    kv = KVCache(model.config.n_layer)      # generation's cached path reads the toggle too
    with torch.no_grad():
        cached = [model(x[:, t:t + 1], cache=kv)[0][0, -1] for t in range(x.size(1))]
    assert torch.allclose(torch.stack(cached), fast[0], atol=1e-4)


def test_a_speaker_tag_is_a_line_of_capitals_and_a_colon():
    text = "JULIET:\nO Romeo, Romeo!\n\nKING RICHARD III:\nNow is the winter:\nFirst Citizen:\n"
    assert speaker_line_share(text) == pytest.approx(2 / 5)
    assert line_length("ab\n\nabcd\n") == 3.0 and speaker_line_share("") == 0.0


def test_microgpts_head_statistics_read_real_characters_only():
    cfg = config.load(["profile=microgpt", "eval.head_windows=16"])
    corpus = load_corpus(cfg.data)
    dm = CorpusDataModule(corpus, 1, cfg.model.block_size, 1, 2, 16)
    torch.manual_seed(0)
    model = GPT(cfg.model).eval()
    table = head_measure.head_statistics(model, corpus, dm.val, cfg.eval.head_windows, cfg.eval.head_skip)
    x, y = (torch.cat(t)[:16] for t in zip(*dm.val))
    assert (y < 0).float().mean() > 0.3            # names are short: much of each window is padding
    with torch.no_grad():
        _, maps = model.attention_maps(x)
    boundary = {corpus.bos}
    everything = head_measure.head_table(maps, x, boundary, skip=cfg.eval.head_skip)
    real_only = head_measure.head_table(maps, x, boundary, skip=cfg.eval.head_skip, real=y >= 0)
    for column in ("max_weight", "offset1_share", "entropy", "positional_score"):
        assert table[column].tolist() == pytest.approx(real_only[column].tolist()), column
    assert table["max_weight"].tolist() != pytest.approx(everything["max_weight"].tolist())
