"""Head statistics on hand-made attention patterns whose answers are known, and on a real GPT."""
import math
import re

import pandas as pd
import pytest
import torch
from torch import nn

from lm.heads.measure import head_table, induction_score
from lm.heads.summary import headline, strongest
from lm.heads.table import STATISTICS, TL_CONVENTION, percent_metrics
from lm.model.model import GPT, GPTConfig

T, SKIP = 24, 8
TEXT = "to be or not to be\nthat is the question whether tis nobler in the mind\n"
CHARS = sorted(set(TEXT))
STOI = {c: k for k, c in enumerate(CHARS)}
BOUNDARY = {STOI[" "], STOI["\n"]}


def windows(text=TEXT, n=3):
    """n windows of T characters from text, each starting a few characters later."""
    ids = torch.tensor([STOI[c] for c in text])
    return torch.stack([ids[k * 5:k * 5 + T] for k in range(n)])


def pattern(idx, key_of):
    """(batch, 1, T, T) weights putting all of query i's weight on key_of(window, i)."""
    w = torch.zeros(idx.size(0), 1, T, T)
    for b in range(idx.size(0)):
        for i in range(T):
            w[b, 0, i, key_of(idx[b], i)] = 1.0
    return w


def prev_token(idx):
    return pattern(idx, lambda ids, i: max(i - 1, 0))


def uniform(idx):
    w = torch.ones(T, T).tril()
    return (w / w.sum(-1, keepdim=True)).expand(idx.size(0), 1, T, T)


def row(maps, idx):
    return head_table(maps, idx, BOUNDARY, skip=SKIP).iloc[0]


def test_previous_token_pattern():
    idx = windows()
    r = row([prev_token(idx)], idx)
    assert r["offset"] == 1 and r["offset_share"] == 1.0
    assert r["max_weight"] == pytest.approx(1.0)
    assert r["prev_token_score"] == pytest.approx(1.0)
    assert r["prev_token_score_excl"] == pytest.approx(1.0)
    assert r["m1"] == pytest.approx(1.0)
    assert r["m0"] == 0 and r["m2"] == 0
    assert r["distance"] == pytest.approx(1.0)
    assert r["entropy"] == pytest.approx(0.0)
    assert r["label"].startswith("block 1, head 1: 1 back at 100% of positions")
    assert r["label"] == "block 1, head 1: 1 back at 100% of positions; average heaviest weight 1.00"


def test_uniform_causal_pattern():
    idx = windows()
    r = row([uniform(idx)], idx)
    i = torch.arange(SKIP, T, dtype=torch.float64)
    assert r["entropy"] == pytest.approx(torch.log(i + 1).mean().item(), rel=1e-5)
    assert r["entropy_norm"] == pytest.approx(1.0, rel=1e-5)
    assert r["distance"] == pytest.approx((i / 2).mean().item(), rel=1e-5)
    assert r["positional_score"] == pytest.approx(1.0)
    assert r["max_weight"] == pytest.approx((1 / (i + 1)).mean().item(), rel=1e-5)
    # Every key is equally heavy; the first one wins, so the offset is i itself: no offset dominates.
    assert r["offset_share"] == pytest.approx(1 / (T - SKIP))
    assert r["prev_token_score"] == pytest.approx((1 / (i + 1)).mean().item(), rel=1e-5)


def test_positional_score_sees_content():
    idx = windows(n=2)
    # One window looks one back, the other two back: half of every row's weight moves.
    w = torch.cat([prev_token(idx[:1]), pattern(idx[1:], lambda ids, i: max(i - 2, 0))])
    assert row([w], idx)["positional_score"] == pytest.approx(0.5)


def test_word_start():
    idx = windows()

    def space_before_word(ids, i):
        if ids[i].item() in BOUNDARY:
            return i - 1   # boundaries are no query here, so where they look must not count
        before = [j for j in range(i) if ids[j].item() in BOUNDARY]
        return before[-1] if before else i

    assert row([pattern(idx, space_before_word)], idx)["word_start_score"] == pytest.approx(1.0)
    # Looking one back finds the space only from a word's first letter.
    first = [ids[i - 1].item() in BOUNDARY for ids in idx for i in range(SKIP, T)
             if ids[i].item() not in BOUNDARY and any(ids[j].item() in BOUNDARY for j in range(i))]
    prev = row([prev_token(idx)], idx)["word_start_score"]
    assert prev == pytest.approx(sum(first) / len(first))
    assert 0 < prev < 1


def test_unmasked_pattern_reads_ahead():
    idx = windows()
    r = row([pattern(idx, lambda ids, i: min(i + 1, T - 1))], idx)
    assert r["offset"] == -1 and r["distance"] == pytest.approx(-(T - SKIP - 1) / (T - SKIP))
    assert r["label"].startswith("block 1, head 1: 1 ahead at")


def test_duplicate_token():
    idx = torch.tensor([[k % 5 for k in range(T)]] * 2)   # "abcdeabcde…": every query past 5 repeats
    back5 = pattern(idx, lambda ids, i: i - 5 if i >= 5 else i)
    r = row([back5], idx)
    assert r["dup_token_score"] == pytest.approx(1.0)
    assert r["prev_token_score"] == 0
    assert row([prev_token(idx)], idx)["dup_token_score"] == 0
    # Half on itself, half on the last occurrence: excluding the current token doubles the score.
    half = (back5 + pattern(idx, lambda ids, i: i)) / 2
    r = row([half], idx)
    assert r["dup_token_score"] == pytest.approx(0.5)
    assert r["dup_token_score_excl"] == pytest.approx(1.0)


def test_numbered_from_one_and_strongest():
    idx = windows()
    u, p = uniform(idx), prev_token(idx)
    maps = [torch.cat([u, u, u], 1), torch.cat([u, u, p], 1)]
    table = head_table(maps, idx, BOUNDARY, skip=SKIP)
    assert table["block"].tolist() == [1, 1, 1, 2, 2, 2]
    assert table["head"].tolist() == [1, 2, 3, 1, 2, 3]
    assert strongest(table, "prev_token_score") == (2, 3)
    assert table["label"].iloc[-1].startswith("block 2, head 3: 1 back at 100%")


class FakeInductionModel(nn.Module):
    """Head 1 reads the character after the previous occurrence; head 2 reads the previous character."""

    def __init__(self, block_size):
        super().__init__()
        self.config = GPTConfig(block_size=block_size)
        self.seen = []

    def attention_maps(self, x):
        assert not self.training and not torch.is_grad_enabled()
        assert x.size(1) <= self.config.block_size
        self.seen.append(x)
        n, T2 = x.shape
        L = T2 // 2
        w = torch.zeros(n, 2, T2, T2)
        for i in range(T2):
            w[:, 0, i, i - L + 1 if i >= L else i] = 1.0
            w[:, 1, i, max(i - 1, 0)] = 1.0
        return None, [w]


def test_induction_on_exact_pattern():
    model = FakeInductionModel(block_size=64).train()
    scores = induction_score(model, vocab_size=10, L=20, n=4, exclude=(0, 1))
    assert scores.columns.tolist() == ["block", "head", "induction_score"]
    assert scores["induction_score"].tolist() == pytest.approx([1.0, 0.0])
    assert model.training   # the caller's mode comes back
    x = model.seen[-1]
    assert x.shape == (4, 40) and torch.equal(x[:, :20], x[:, 20:])
    assert x.min() >= 2 and x.max() < 10


def test_induction_shrinks_to_the_context():
    model = FakeInductionModel(block_size=16)
    scores = induction_score(model, vocab_size=10, L=20, n=2)
    assert model.seen[-1].shape == (2, 16)
    assert scores["induction_score"].iloc[0] == pytest.approx(1.0)


UNIT = ["offset_share", "max_weight", *(f"m{d}" for d in range(9)), "prev_token_score", "prev_token_score_excl",
        "dup_token_score", "dup_token_score_excl", "positional_score", "word_start_score", "entropy_norm"]


@pytest.mark.parametrize("mask", [True, False])
def test_real_gpt(mask):
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=len(CHARS), block_size=T, n_layer=2, n_head=4, n_embd=32, mask=mask)).eval()
    idx = torch.randint(len(CHARS), (8, T))
    idx[:, ::4] = STOI[" "]   # boundaries, so every query has a word start
    with torch.no_grad():
        _, maps = model.attention_maps(idx)
    table = head_table(maps, idx, BOUNDARY, skip=SKIP)
    assert len(table) == 8
    assert table[["block", "head"]].values.tolist() == [[b, h] for b in (1, 2) for h in (1, 2, 3, 4)]
    for column in UNIT:
        if column == "entropy_norm" and not mask:
            continue   # unmasked rows spread over all T keys, more than ln(i + 1) can normalise
        assert table[column].between(-1e-6, 1 + 1e-6).all(), column
    if mask:
        assert (table["offset"] >= 0).all() and (table["distance"] >= 0).all()

    induction = induction_score(model, vocab_size=len(CHARS), L=20, n=4)
    assert len(induction) == 8 and induction["induction_score"].between(0, 1).all()
    numbers = headline(table.merge(induction, on=["block", "head"]))
    assert {"heads_prev_token_max", "heads_word_start_max", "heads_induction_max",
            "heads_positional_max", "heads_entropy_norm_mean"} <= set(numbers)
    for key, value in numbers.items():
        assert re.fullmatch(r"[\w\-./ ]+", key) and math.isfinite(value)


def test_convention_is_quotable():
    assert '"mul"' in TL_CONVENTION and "\n" not in TL_CONVENTION
    assert "exclude_current_token" in TL_CONVENTION


# --- the table of statistics -----------------------------------------------------------------------------
def test_every_statistic_in_the_table_is_a_column_and_every_aggregate_a_logged_metric():
    idx = windows()
    maps = [torch.cat([prev_token(idx), uniform(idx)], 1), torch.cat([uniform(idx), prev_token(idx)], 1)]
    table = head_table(maps, idx, BOUNDARY, skip=SKIP).assign(induction_score=0.5)
    assert {s.name for s in STATISTICS} <= set(table.columns)
    numbers = headline(table)
    expected = {s.metric_name(how, b) for s in STATISTICS for how in s.aggregate
                for b in (None, *((1, 2) if s.per_block else ()))}
    assert set(numbers) == expected
    assert percent_metrics() >= {"heads_offset1_share_max", "heads_offset1_share_max_block1",
                                 "heads_last3_mass_mean_block1"}


def test_headline_aggregates_over_heads_and_over_each_block_alone():
    idx = windows()
    back2 = pattern(idx, lambda ids, i: max(i - 2, 0))
    # block 1: a 1-back head and a 2-back head; block 2: a uniform head and a 2-back head
    table = head_table([torch.cat([prev_token(idx), back2], 1), torch.cat([uniform(idx), back2], 1)], idx,
                       BOUNDARY, skip=SKIP)
    numbers = headline(table)
    assert numbers["heads_offset1_share_max"] == 1.0 and numbers["heads_offset1_share_max_block1"] == 1.0
    assert numbers["heads_offset1_share_max_block2"] == pytest.approx(table.loc[2, "offset1_share"])
    assert numbers["heads_offset1_share_max_block2"] < 0.2
    assert numbers["heads_offset2_share_max_block2"] == 1.0
    assert numbers["heads_last3_mass_mean_block1"] == pytest.approx(1.0)
    assert numbers["heads_positional_mean_block1"] == pytest.approx(table.loc[:1, "positional_score"].mean())
    assert numbers["heads_max_weight_mean"] == pytest.approx(table["max_weight"].mean())


def test_headline_defaults_leave_out_what_is_missing_or_nan():
    table = pd.DataFrame({"block": [1, 1], "head": [1, 2], "prev_token_score": [0.2, 0.7],
                          "word_start_score": [math.nan, math.nan]})
    assert headline(table) == {"heads_prev_token_max": 0.7}
    assert headline(pd.DataFrame({"block": [], "head": []})) == {}


def test_a_share_of_positions_counts_every_offset_not_only_the_most_common():
    idx = windows(n=2)
    # window 1 reads one back, window 2 two back: 50% each, and the most common offset is a tie
    w = torch.cat([prev_token(idx[:1]), pattern(idx[1:], lambda ids, i: max(i - 2, 0))])
    r = row([w], idx)
    assert r["offset1_share"] == pytest.approx(0.5) and r["offset2_share"] == pytest.approx(0.5)


def test_padding_rows_are_left_out_of_every_statistic():
    idx = windows(n=2)
    real = torch.ones(2, T, dtype=torch.bool)
    real[:, 16:] = False                 # the end of each window is padding after a document's end
    # real rows read one back; the padding rows read themselves (BOS), as a model's padding might
    w = pattern(idx, lambda ids, i: max(i - 1, 0) if i < 16 else i)
    with_padding = head_table([w], idx, BOUNDARY, skip=SKIP).iloc[0]
    r = head_table([w], idx, BOUNDARY, skip=SKIP, real=real).iloc[0]
    assert with_padding["offset1_share"] == pytest.approx(0.5)
    assert r["offset1_share"] == 1.0 and r["offset"] == 1 and r["m0"] == 0 and r["m1"] == pytest.approx(1.0)
    assert r["prev_token_score"] == pytest.approx(1.0) and r["distance"] == pytest.approx(1.0)
    none = head_table([w], idx, BOUNDARY, skip=SKIP, real=torch.zeros(2, T, dtype=torch.bool)).iloc[0]
    assert math.isnan(none["max_weight"]) and math.isnan(none["word_start_score"])
