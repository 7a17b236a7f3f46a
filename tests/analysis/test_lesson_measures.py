"""The measurements behind the lessons' claims that issue 23 found unchecked, each against its definition: on
hand-made weights whose answers are known, and on real models and the real corpora."""
import math

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from lm.heads.measure import head_table
from lm.heads.summary import headline
from lm.measures import probes
from lm.model.data import Corpus, load_corpus, val_batches
from lm.model.model import GPT, GPTConfig
from lm.model.sample import Words, short_word_validity, training_words
from lm.settings import config


@pytest.fixture(scope="module")
def shakespeare() -> Corpus:
    return load_corpus(config.load([]).data)


def windows(corpus: Corpus, n: int = 16, T: int = 64):
    return val_batches(corpus, 1, n, T)[0][0]


# --- lesson 000: "scores per layer: 32 windows × 4 heads × 64 × 64 = 524,288" -----------------------------
def test_a_training_step_holds_the_whole_score_array_only_on_a_path_that_builds_it():
    for T in (16, 32):
        model = GPT(GPTConfig(block_size=T, n_layer=1)).eval()
        with sdpa_kernel(SDPBackend.MATH):            # the plain formula: softmax(QKᵀ/√d) V, held whole
            assert probes.score_array_size(model, 8) == 8 * 4 * T * T
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # the fused kernel: the scores in tiles, never held
            assert probes.score_array_size(model, 8) == 0
        assert all(p.grad is None for p in model.parameters()) and not model.training


# --- lesson 000: "shuffling the earlier characters wouldn't change their weighted average" ----------------
def test_shuffling_the_earlier_characters_leaves_block_ones_average_unchanged_only_without_positions(shakespeare):
    x = windows(shakespeare)
    torch.manual_seed(0)
    without = GPT(GPTConfig(pos_emb=False)).eval()
    torch.manual_seed(0)
    with_pos = GPT(GPTConfig()).eval()
    assert probes.shuffle_change(without, x) < 1e-5        # float32 rounding only
    assert probes.shuffle_change(with_pos, x) > 0.1
    # the whole model without positions is not invariant: block 2 reads what block 1 made of each prefix
    shuffled = torch.cat([x[:, :-1].flip(1), x[:, -1:]], 1)
    with torch.no_grad():
        assert not torch.allclose(without(x)[0][:, -1], without(shuffled)[0][:, -1], atol=1e-3)


# --- lesson 000: differences of 8 or more, weights like 0.98; "the unscaled spread would be 8 or 11" --------
def test_gap_share_counts_each_querys_pairs_of_keys_at_least_the_gap_apart():
    s = torch.tensor([[0.0, 99.0, 99.0],       # row 0: one key, no pair (the rest is masked, never read)
                      [0.0, 7.0, 99.0],        # row 1: 7 apart: no
                      [0.0, 8.0, 20.0]])       # row 2: 8, 20 and 12 apart: all three
    assert probes.gap_share([s[None, None]], 8.0) == pytest.approx(3 / 4)
    assert probes.gap_share([s[None, None], s[None, None]], 21.0) == 0.0


def test_unscaled_scores_at_initialisation_spread_about_the_square_root_of_the_head_width(shakespeare):
    x = windows(shakespeare)
    out = {}
    for d_head, kw in ((16, {}), (64, {"n_head": 1}), (128, {"n_head": 1, "n_embd": 128})):
        torch.manual_seed(0)
        out[d_head] = probes.attention_at_init(GPT(GPTConfig(scale_attn=False, **kw)).eval(), x)
        assert out[d_head]["init_score_std"] == pytest.approx(math.sqrt(d_head), rel=0.15)
    torch.manual_seed(0)
    scaled = probes.attention_at_init(GPT(GPTConfig(n_head=1)).eval(), x)
    assert scaled["init_score_std"] == pytest.approx(1.0, rel=0.15)      # "whatever d is"
    # the wider the spread, the more pairs 8 apart and rows at 0.98 or more; scaled, hardly any
    shares = [(out[d]["init_score_gap8_share"], out[d]["init_onehot_share"]) for d in (16, 64, 128)]
    assert shares == sorted(shares) and shares[0][0] > 0.05
    assert scaled["init_score_gap8_share"] < 1e-3 and scaled["init_onehot_share"] < 0.01


# --- lesson 001: "the final 'e' looks most at the 'l', 43%" ------------------------------------------------
def test_last_row_reads_counts_heads_by_the_letter_they_read_most_and_their_weight_on_it():
    chars = ["<BOS>", "k", "a", "y", "l", "e", "e"]
    head_l = [[1.0]] * 6 + [[0.1, 0.05, 0.05, 0.02, 0.43, 0.15, 0.2]]
    head_e = [[1.0]] * 6 + [[0.1, 0.0, 0.0, 0.0, 0.3, 0.25, 0.35]]   # 'e' twice: 0.6 on the letter
    out = probes.last_row_reads({"chars": chars, "weights": [[head_l, head_e]]})
    assert out["heatmap_last_reads_l"] == 1 and out["heatmap_last_weight_l"] == pytest.approx(0.43)
    assert out["heatmap_last_reads_e"] == 1 and out["heatmap_last_weight_e"] == pytest.approx(0.6)
    assert out["heatmap_last_reads_k"] == 0 and "heatmap_last_reads_<BOS>" not in out


def test_last_row_reads_on_microgpt_and_kaylee():
    cfg = config.load(["profile=microgpt"])
    corpus = load_corpus(cfg.data)
    torch.manual_seed(0)
    attention = probes.attention_on(GPT(cfg.model).eval(), corpus, cfg.data.heatmap_line)
    out = probes.last_row_reads(attention)
    assert "".join(attention["chars"][1:]) == "kaylee"
    assert sum(out[f"heatmap_last_reads_{c}"] for c in "kayle") <= 4       # 4 heads, some may read the BOS
    assert 0 < out["heatmap_last_weight_l"] < 1


# --- lessons 000 and 001: heads spread over the last 3; the start marker and itself -----------------------
T, SKIP = 24, 8


def at(offsets: dict[int, float], n: int = 2) -> torch.Tensor:
    """(n, 1, T, T): every query puts weight w on the key `offset` back (the first key where that is before it)."""
    w = torch.zeros(n, 1, T, T)
    for i in range(T):
        for d, share in offsets.items():
            w[:, 0, i, max(i - d, 0)] += share
    return w


def test_four_sharp_one_back_heads_are_not_spread_over_the_last_3_and_even_ones_are():
    idx = torch.zeros(2, T, dtype=torch.long)
    sharp = torch.cat([at({1: 1.0})] * 4, 1)
    even = torch.cat([at({1: 1 / 3, 2: 1 / 3, 3: 1 / 3}), at({1: 0.4, 2: 0.35, 3: 0.25}), at({1: 1.0}),
                      at({2: 0.9, 5: 0.1})], 1)
    numbers = headline(head_table([sharp, even], idx, set(), skip=SKIP))
    assert numbers["heads_last3_spread_sum_block1"] == 0
    assert numbers["heads_last3_spread_sum_block2"] == 2
    assert numbers["heads_last3_mass_min_block1"] == pytest.approx(1.0)   # what the older check read: it passed


def test_start_marker_and_self_weights_against_an_even_share():
    idx = torch.zeros(2, T, dtype=torch.long)
    w = torch.ones(T, T).tril()
    even = (w / w.sum(-1, keepdim=True)).expand(2, 1, T, T)
    start_and_self = at({0: 0.5})          # half on itself, half on the first key
    start_and_self[:, 0, :, 0] += 0.5
    table = head_table([torch.cat([even, start_and_self], 1)], idx, set(), skip=SKIP)
    expected = sum(1 / (i + 1) for i in range(SKIP, T)) / (T - SKIP)
    assert table["uniform_share"].tolist() == pytest.approx([expected, expected])
    assert table.loc[0, "start_mass"] == pytest.approx(expected) and table.loc[0, "m0"] == pytest.approx(expected)
    assert table.loc[1, "start_mass"] == pytest.approx(0.5) and table.loc[1, "m0"] == pytest.approx(0.5)
    numbers = headline(table)
    assert numbers["heads_start_mass_min"] == pytest.approx(expected)
    assert numbers["heads_m0_min"] == pytest.approx(expected)


# --- lesson 000: "spells most short words correctly"; lesson 002: "train 1.562" ----------------------------
def test_short_word_validity_reads_only_words_of_at_most_four_letters(shakespeare):
    words = training_words(shakespeare.train_text, Words.STRIPPED)
    # lesson 000's own sample: its short words are real, its long misspellings are not counted
    assert short_word_validity("To his send comentle I to entreath.", words) == 1.0
    assert short_word_validity("Thou zqx art, qwv!", words) == pytest.approx(2 / 4)
    assert math.isnan(short_word_validity("entreath comentle", words))


def test_the_training_loss_windows_are_fixed_windows_of_the_training_text(shakespeare):
    train = val_batches(shakespeare, 2, 8, 64, split="train")
    again = val_batches(shakespeare, 2, 8, 64, split="train")
    assert all(torch.equal(a[0], b[0]) for a, b in zip(train, again))
    held_out = shakespeare.decode(shakespeare.val.tolist())
    for x, y in train:
        for row, target in zip(x, y):
            window = shakespeare.decode(row.tolist()) + shakespeare.decode([int(target[-1])])
            assert window in shakespeare.train_text and window not in held_out
            assert torch.equal(row[1:], target[:-1])


# --- lesson 000: "A gradient check on a small masked attention calculation agrees to eight digits" ----------
def test_the_gradient_check_of_the_models_masked_attention_agrees_to_eight_digits_in_float64():
    """As the lesson's code makes it: float64, central differences of step 1e-6, worst |numeric − analytic| /
    (|numeric| + |analytic|) over five entries, below 1e-8. A step of 1e-2 leaves differences' own error above it:
    the measure can fail."""
    assert probes.attention_gradcheck() < 1e-8
    assert probes.attention_gradcheck(step=1e-2) > 1e-8
    assert probes.attention_gradcheck() == probes.attention_gradcheck()   # fixed draws: every run logs the same


# --- lesson 001: "the weights come out 0.576, 0.14 and 0.284 … So the output is [7.18, 2.82]" ---------------
def test_the_worked_blend_comes_out_of_the_models_own_attention_as_the_lesson_prints_it():
    found = probes.worked_blend()
    weights = [found[f"worked_weight_{i}"] for i in (1, 2, 3)]
    assert [f"{weights[0]:.3f}", f"{weights[1]:.2f}", f"{weights[2]:.3f}"] == ["0.576", "0.14", "0.284"]
    assert [f"{found['worked_blend_1']:.2f}", f"{found['worked_blend_2']:.2f}"] == ["7.18", "2.82"]
    assert sum(weights) == pytest.approx(1)
    # The model's attention, on the path training uses too: the fused kernel blends the lab's values alike.
    q, k, v = (torch.tensor(t, dtype=torch.float64)[None, None] for t in ([probes.LAB_QUERY], probes.LAB_KEYS,
                                                                          probes.LAB_VALUES))
    from lm.model.model import attend
    assert attend(q, k, v, past=2)[0][0, 0, 0].tolist() == pytest.approx([found["worked_blend_1"],
                                                                           found["worked_blend_2"]], rel=1e-12)


# --- lesson 000: "so the attention weights barely learn" ------------------------------------------------------
def test_attention_change_is_how_far_the_weights_moved_from_the_untrained_model(shakespeare):
    c = GPTConfig(n_layer=2)
    start = probes.untrained(c, seed=3)
    batches = val_batches(shakespeare, 1, 8, 64)
    assert probes.attention_change(probes.untrained(c, seed=3), start, batches, 8) == 0   # the same model rebuilt
    other = probes.untrained(c, seed=4)
    moved = probes.attention_change(other, start, batches, 8)
    assert 0.1 < moved < 1
    # by hand: half the absolute difference of each row with more than one key, averaged
    x = batches[0][0]
    (_, a), (_, b) = other.attention_maps(x), start.attention_maps(x)
    by_hand = torch.stack([0.5 * (p - q)[:, :, 1:].abs().sum(-1).mean() for p, q in zip(a, b)]).mean()
    assert moved == pytest.approx(by_hand.item(), rel=1e-5)


# --- lesson 000's P4 and lesson 001's check yourself 1, through the model's attention --------------------------
def test_the_softmax_questions_come_out_of_the_models_attention_as_the_softmax_formula_gives():
    found = probes.softmax_questions()
    # P4: scores [2, 0, −∞]: e² / (e² + 1) on the first, the rest on the second, exactly nothing on the masked third
    assert found["p4_weight_1"] == pytest.approx(math.exp(2) / (math.exp(2) + 1), rel=1e-12)
    assert f"{found['p4_weight_1']:.3f}" == "0.881"
    assert found["p4_weight_2"] == pytest.approx(1 / (math.exp(2) + 1), rel=1e-12) and found["p4_weight_3"] == 0
    # check yourself 1: two alike keys tie at a half each, and the blend of [2, 0] and [0, 4] is [1, 2], exactly
    assert [found[f"check1_weight_{i}"] for i in (1, 2)] == [0.5, 0.5]
    assert [found[f"check1_blend_{i}"] for i in (1, 2)] == [1.0, 2.0]


# --- lesson 002: "var(q.k / sqrt d) = 1.02 (~ 1)"; "the gradients would vanish" --------------------------------
def test_lesson_002s_d64_demonstration_on_fixed_draws():
    found = probes.randn_d64()
    assert found == probes.randn_d64()                                   # fixed draws: every run the same
    assert 60 < found["randn_d64_qk_var"] < 68 and 0.94 < found["randn_d64_scaled_var"] < 1.06
    assert found["randn_d64_qk_var"] / found["randn_d64_scaled_var"] == pytest.approx(64, rel=1e-5)
    # unscaled: most of a row's weight on one of its 8 keys, and a few times less gradient reaching the scores
    assert found["randn_d64_max_weight_unscaled"] > 0.8 > 0.45 > found["randn_d64_max_weight_scaled"] > 1 / 8
    assert found["randn_d64_score_grad_unscaled"] < 0.5 * found["randn_d64_score_grad_scaled"]


def test_the_gradient_reaching_the_scores_is_the_lessons_softmax_backward():
    """score_gradient against the lesson's own line, s · (g − Σ s g), on random scores with a mask."""
    g = torch.Generator().manual_seed(1)
    scores = torch.randn(2, 3, 5, 5, generator=g).masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), -math.inf)
    scores.requires_grad_()
    s = scores.softmax(-1)
    probe_ = torch.randn(2, 3, 5, 5, generator=g)
    (ds,) = probes.score_gradient((s * probe_).sum(), [s])
    s = s.detach()
    assert torch.allclose(ds, s * (probe_ - (s * probe_).sum(-1, keepdim=True)), atol=1e-6)
    assert ds[..., ~torch.ones(5, 5, dtype=torch.bool).tril()].abs().max() == 0


# --- lesson 000's mask; lesson 001's check yourself 2 -----------------------------------------------------------
def test_the_mask_checks_on_a_real_model_and_without_the_mask(shakespeare):
    x, y = val_batches(shakespeare, 1, 4, 64)[0]
    torch.manual_seed(0)
    masked = probes.mask_checks(GPT(GPTConfig()).eval(), x, y)
    assert masked["mask_future_weight_max"] == 0 and masked["first_self_weight_min"] == 1
    assert masked["mask_score_grad_max"] == 0 and masked["allowed_score_grad_max"] > 1e-6
    assert masked["one_key_weight_min"] == 1
    torch.manual_seed(0)
    unmasked = probes.mask_checks(GPT(GPTConfig(mask=False)).eval(), x, y)
    assert unmasked["mask_future_weight_max"] > 0.01 and unmasked["first_self_weight_min"] < 0.5
    assert unmasked["mask_score_grad_max"] > 1e-6


def test_a_single_key_in_microgpts_cache_takes_all_the_attention():
    cfg = config.load(["profile=microgpt"])
    corpus = load_corpus(cfg.data)
    x, y = val_batches(corpus, 1, 4, cfg.model.block_size)[0]
    torch.manual_seed(0)
    model = GPT(cfg.model).eval()
    assert probes.mask_checks(model, x, y)["one_key_weight_min"] == 1
    assert all(p.grad is None for p in model.parameters())


# --- lesson 000: "knobs: 4,160 + 4,096 + 2 × 49,792 + 4,353 = 112,193" -------------------------------------------
def test_the_parameters_by_part_are_the_lessons_breakdown_and_sum_to_the_count():
    for kw, terms in (({}, [4160, 4096, 49792, 49792, 4353]),
                      ({"n_layer": 4}, [4160, 4096, *[49792] * 4, 4353]),
                      ({"block_size": 128}, [4160, 128 * 64, 49792, 49792, 4353]),
                      ({"n_embd": 128}, [65 * 128, 64 * 128, *[12 * 128 ** 2 + 10 * 128] * 2, 2 * 128 + 128 * 65 + 65])):
        model = GPT(GPTConfig(**kw))
        found = probes.parameter_terms(model)
        assert list(found.values()) == terms, kw
        assert sum(found.values()) == sum(p.numel() for p in model.parameters())
    micro = GPT(config.load(["profile=microgpt"]).model)
    found = probes.parameter_terms(micro)
    assert found["params_pos"] == 16 * 16 and sum(found.values()) == 4192


# --- lesson 000: "32 windows × 4 heads × 64 × 64 = 524,288", measured on the plain path -----------------------------
def test_the_plain_attention_path_holds_the_lessons_score_array_whatever_the_default_kernel():
    model = GPT(GPTConfig(block_size=32, n_layer=1)).eval()
    assert probes.score_array_size_math(model, 8) == 8 * 4 * 32 * 32
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):    # the plain path is asked for by name: the caller's choice yields
        assert probes.score_array_size_math(model, 8) == 8 * 4 * 32 * 32
    assert all(p.grad is None for p in model.parameters()) and not model.training


# --- lesson 000: "Its slopes s_i(δ_ij − s_j) are then nearly 0"; the shares by row length --------------------------
def test_init_softmax_on_the_untrained_models_scaled_and_unscaled(shakespeare):
    x, y = val_batches(shakespeare, 1, 16, 64)[0]
    found = {}
    for scale in (True, False):
        model = probes.untrained(GPTConfig(scale_attn=scale), seed=3)
        found[scale] = probes.init_softmax(model, x, y)
        pooled = probes.attention_at_init(model, x)
        by_keys = found[scale]["onehot_by_keys"]
        assert len(by_keys) == len(found[scale]["gap8_by_keys"]) == 63                  # rows of 2 … 64 keys
        # the rows of each length, weighted by how many there are, pool to the share over all rows
        assert sum(by_keys) / 63 == pytest.approx(pooled["init_onehot_share"], abs=1e-6)
    # unscaled: smaller slopes and gradient reaching the scores; one-hot rows more common in short rows
    assert found[False]["init_softmax_slope"] < found[True]["init_softmax_slope"]
    assert found[False]["init_score_grad"] < found[True]["init_score_grad"]
    short, long = found[False]["onehot_by_keys"][:8], found[False]["onehot_by_keys"][-8:]
    assert sum(short) > sum(long) > 0
    assert max(found[True]["onehot_by_keys"]) < 0.1


def test_punctuation_share_counts_the_visible_characters_that_are_neither_letters_nor_digits():
    assert probes.punctuation_share("To be, or not:\n  to be.") == pytest.approx(3 / 16)
    assert probes.punctuation_share("words only") == 0 and probes.punctuation_share(" \n") == 0
