"""What a trained model shows, measured once at the end of a run: the numbers and files MLflow keeps."""
import functools
import json
import math

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils._python_dispatch import TorchDispatchMode

from lm.heads.measure import has_word_starts
from lm.model.data import Corpus, DataConfig
from lm.model.model import GPT, CausalSelfAttention, GPTConfig, KVCache, attend, honest_loss, losses_of, token_losses
from lm.model.sample import (
    Words,
    generate,
    line_length,
    line_length_range,
    next_char_probs,
    real_word_share,
    short_word_validity,
    speaker_line_share,
    training_words,
    word_validity,
)


@torch.no_grad()
def validation(model: GPT, batches) -> dict:
    """val_loss and the loss by position, each with its standard error over the windows (val_loss_se,
    loss_by_position_se), each window's mean loss (window_losses, in the batches' order) and each window's loss at
    each position (position_losses: windows × positions, NaN past a shorter window's end). A batch may hold
    windows shorter than the context (the held-out text's last): they count at their own positions."""
    T = model.config.block_size
    by_pos = torch.zeros(T, dtype=torch.float64)
    n_pos, squares, windows, at_position = torch.zeros_like(by_pos), torch.zeros_like(by_pos), [], []
    for x, y in batches:
        losses = token_losses(model, x, y).double().cpu()
        mask = (y >= 0).cpu()
        t = x.size(1)
        by_pos[:t] += losses.sum(0)
        n_pos[:t] += mask.sum(0)
        squares[:t] += (losses ** 2).sum(0)
        windows.append(losses.sum(1) / mask.sum(1).clamp(min=1))
        row = torch.full((x.size(0), T), math.nan, dtype=torch.float32)   # (windows, positions)
        row[:, :t] = losses.float().masked_fill(~mask, math.nan)
        at_position.append(row)
    total, count = by_pos.sum().item(), n_pos.sum().item()
    out = {"val_loss": total / count, "loss_by_position": (by_pos / n_pos.clamp(min=1)).tolist()}
    out["val_perplexity"] = math.exp(out["val_loss"])
    per_window = torch.cat(windows)
    out["window_losses"] = per_window
    out["position_losses"] = torch.cat(at_position)
    out["val_loss_se"] = per_window.std().item() / math.sqrt(len(per_window)) if len(per_window) > 1 else 0.0
    n = n_pos.clamp(min=2)
    spread = ((squares - by_pos ** 2 / n) / (n - 1)).clamp(min=0)
    out["loss_by_position_se"] = (spread / n).sqrt().tolist()
    return out


def honest(model: GPT, batches, windows: int) -> float:
    """The honest loss (lm/model/model.py honest_loss) on the first `windows` windows of the batches."""
    x, y = (torch.cat(t)[:windows] for t in zip(*batches))
    return honest_loss(model, x, y)


@torch.no_grad()
def batch_loss(model: GPT, batch) -> float:
    """The mean loss on one batch, in the mode the model is in: lesson 002's "loss at init", which the notebook
    prints for one training batch of its untrained model."""
    return model(*batch)[1].item()


def attention_gradcheck(step: float = 1e-6) -> float:
    """Lesson 000's "a gradient check on a small masked attention calculation agrees to eight digits", made as the
    lesson makes it: in float64, on a small masked attention of the lesson's size (2 windows of 5 characters, 3 heads
    of 4 numbers) built from the model's own attention layer (lm/model/model.py CausalSelfAttention, the path
    training uses), f = Σ attention(x) · probe differentiated at a few entries (of x, and of the query, key and
    value weights) by central differences and by autograd. The worst relative error |numeric − analytic| /
    (|numeric| + |analytic|), as the lesson computes it. Fixed draws: the same number for every run."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        layer = CausalSelfAttention(GPTConfig(n_embd=12, n_head=3, block_size=5), 0).double().eval()
        x = torch.randn(2, 5, 12, dtype=torch.float64, requires_grad=True)
        probe_ = torch.randn(2, 5, 12, dtype=torch.float64)
    w = layer.c_attn.weight
    f = lambda: (layer(x)[0] * probe_).sum()  # noqa: E731
    f().backward()
    worst = 0.0
    # two entries of the input; one of each of the query, key and value weights (rows 0-11, 12-23, 24-35)
    for t, idx in [(x, (0, 2, 3)), (x, (1, 4, 0)), (w, (1, 5)), (w, (14, 2)), (w, (31, 9))]:
        with torch.no_grad():
            old = t[idx].item()
            t[idx] = old + step
            up = f().item()
            t[idx] = old - step
            down = f().item()
            t[idx] = old
        numeric, analytic = (up - down) / (2 * step), t.grad[idx].item()
        worst = max(worst, abs(numeric - analytic) / (abs(numeric) + abs(analytic)))
    return worst


# Lesson 001's lab: a query looking for "vowel-ish" keys, three keys and their values.
LAB_QUERY = [1.0, 0.0]
LAB_KEYS = [[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]]
LAB_VALUES = [[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]]


@torch.no_grad()
def worked_blend() -> dict[str, float]:
    """Lesson 001's worked blend, computed by the model's own attention (lm/model/model.py attend): the lab's query
    as the newest of three characters, reading the two before it (cached) and itself, one head of 2 numbers, scaled
    by 1/√2. The weights it gives each key (worked_weight_1 … 3; the lesson: 0.576, 0.14, 0.284) and the blend
    (worked_blend_1, 2; the lesson: [7.18, 2.82])."""
    q, k, v = (torch.tensor(t, dtype=torch.float64)[None, None] for t in ([LAB_QUERY], LAB_KEYS, LAB_VALUES))
    blend, weights = attend(q, k, v, causal=True, past=2, need_weights=True)
    return {**{f"worked_weight_{i}": w for i, w in enumerate(weights[0, 0, 0].tolist(), 1)},
            **{f"worked_blend_{i}": b for i, b in enumerate(blend[0, 0, 0].tolist(), 1)}}


@torch.no_grad()
def softmax_questions() -> dict[str, float]:
    """Questions the lessons ask of one softmax, answered by the model's own attention (lm/model/model.py attend),
    in float64. Lesson 000's P4, "scores [2, 0, −∞]: what weight goes to the first position?": one head of one
    number, scale 1, the query the second of three characters, so the mask hides the third (p4_weight_1 … 3).
    Lesson 001's check yourself 1, "weights [0.5, 0.5], values [2, 0] and [0, 4]": the query the newest of two
    characters whose keys are alike, so their scores tie (check1_weight_1, 2 and the blend check1_blend_1, 2)."""
    f64 = functools.partial(torch.tensor, dtype=torch.float64)
    _, p4 = attend(f64([[0.0], [1.0], [0.0]])[None, None], f64([[2.0], [0.0], [5.0]])[None, None],
                   f64([[1.0], [1.0], [1.0]])[None, None], causal=True, scale=1.0, need_weights=True)
    blend, half = attend(f64([[1.0, 0.0]])[None, None], f64([[1.0, 0.0], [1.0, 0.0]])[None, None],
                         f64([[2.0, 0.0], [0.0, 4.0]])[None, None], causal=True, past=1, need_weights=True)
    return {**{f"p4_weight_{i}": w for i, w in enumerate(p4[0, 0, 1].tolist(), 1)},
            **{f"check1_weight_{i}": w for i, w in enumerate(half[0, 0, 0].tolist(), 1)},
            **{f"check1_blend_{i}": b for i, b in enumerate(blend[0, 0, 0].tolist(), 1)}}


def randn_d64(pairs: int = 1000, rows: int = 1000, keys: int = 8, d: int = 64) -> dict[str, float]:
    """Lesson 002's demonstration of the 1/√d, made as it makes it, with fixed draws: `pairs` random q and k of d = 64
    entries of mean 0 and variance 1, the variance of q·k (randn_d64_qk_var; the lesson: 65.40, "~ d") and of
    q·k / √d (randn_d64_scaled_var; the lesson: 1.02, "~ 1"); then `rows` queries each scoring `keys` random keys
    through the model's attention (lm/model/model.py attend), unscaled and scaled: the mean heaviest weight
    (randn_d64_max_weight_unscaled, _scaled; the lesson's unscaled row prints one-hot) and the mean size of the
    gradient reaching the scores, |∂L/∂score| for L the blend of random values against a random probe
    (randn_d64_score_grad_unscaled, _scaled: "the gradients would vanish")."""
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(pairs, d, generator=g), torch.randn(pairs, d, generator=g)
    raw = (q * k).sum(1)
    out = {"randn_d64_qk_var": raw.var().item(), "randn_d64_scaled_var": (raw / math.sqrt(d)).var().item()}
    q, k, v = (torch.randn(rows, 1, n, d, generator=g) for n in (1, keys, keys))
    probe_ = torch.randn(rows, 1, 1, d, generator=g)
    q.requires_grad_()   # the scores then carry a gradient back
    for name, scale in (("unscaled", 1.0), ("scaled", None)):
        with torch.enable_grad():
            blend, w = attend(q, k, v, causal=False, scale=scale, need_weights=True)
            ds = score_gradient((blend * probe_).sum(), [w])[0]
        out[f"randn_d64_max_weight_{name}"] = w.max(-1).values.mean().item()
        out[f"randn_d64_score_grad_{name}"] = ds.abs().mean().item()
    return out


def score_gradient(loss: torch.Tensor, weights: list[torch.Tensor]) -> list[torch.Tensor]:
    """The gradient of the loss reaching the scores, ∂L/∂score, for each of the attention weights given (softmaxes
    the loss was computed through: the need_weights path of lm/model/model.py attend): autograd's gradient of the
    weights, taken back through each softmax by PyTorch's own backward, the lesson's s · (g − Σ s g). A masked
    score's entry is the gradient of the −∞ the mask put there."""
    grads = torch.autograd.grad(loss, weights, retain_graph=True)   # each softmax's backward is called below
    return [w.grad_fn(g).detach() for w, g in zip(weights, grads)]


def scored(model: GPT, x: torch.Tensor, y: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Every block's attention weights on the windows x, (B, H, T, T) each, and the gradient of the loss on the
    targets y reaching their scores (score_gradient), the model left with no gradients and in the mode it was in."""
    was_training = model.training
    model.eval()
    try:
        with torch.enable_grad():
            logits, maps = model.attention_maps(x)
            grads = score_gradient(losses_of(logits, y).sum() / (y >= 0).sum().clamp(min=1), maps)
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was_training)
    return [m.detach() for m in maps], grads


def mask_checks(model: GPT, x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
    """Lesson 000's causal mask, read off the model on the windows x (targets y): the heaviest weight any head puts
    on a later character (mask_future_weight_max; "exp(−∞) = 0: their weights are exactly 0"), the least weight
    the first character puts on itself (first_self_weight_min; "The first character can only look at itself"),
    the largest gradient of the loss reaching a masked score and an allowed one (mask_score_grad_max,
    allowed_score_grad_max; "Masked positions have s_j = 0, so their gradient is 0 too"); and, as lesson 001 asks,
    the least weight on the only key a KV cache holds after one character (one_key_weight_min)."""
    maps, grads = scored(model, x, y)
    T = x.size(1)
    later = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
    with torch.no_grad():
        cache = KVCache(model.config.n_layer)
        _, first = model._run(x[:, :1], need_weights=True, cache=cache)
    return {"mask_future_weight_max": max(m[..., later].max().item() for m in maps),
            "first_self_weight_min": min(m[:, :, 0, 0].min().item() for m in maps),
            "mask_score_grad_max": max(g[..., later].abs().max().item() for g in grads),
            "allowed_score_grad_max": max(g[..., ~later].abs().max().item() for g in grads),
            "one_key_weight_min": min(w.min().item() for w in first)}


def parameter_terms(model: GPT) -> dict[str, int]:
    """The model's parameters counted by part, as lesson 000 breaks its 112,193 down ("4,160 + 4,096 + 2 × 49,792 +
    4,353"): the character table (params_tok), the position table (params_pos), each block (params_block1 …) and
    the final norm with the output layer (params_out); a norm right after the embedding, where there is one
    (microgpt's), apart (params_embed_norm)."""
    def count(module) -> int:
        return sum(p.numel() for p in module.parameters()) if module is not None else 0
    out = {"params_tok": count(model.wte), "params_pos": count(model.wpe),
           **{f"params_block{i}": count(b) for i, b in enumerate(model.h, 1)},
           "params_out": count(model.ln_f) + count(model.lm_head)}
    if model.ln_e is not None:
        out["params_embed_norm"] = count(model.ln_e)
    return out


def score_array_size_math(model: GPT, batch_size: int) -> int:
    """score_array_size on PyTorch's plain attention, the math kernel (softmax(QKᵀ/√d) V written out), which holds
    the score array a fused kernel computes in tiles: one layer's score array as lesson 000 counts it, measured."""
    with sdpa_kernel(SDPBackend.MATH):
        return score_array_size(model, batch_size)


def init_softmax(model: GPT, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Lesson 000's "its slopes s_i(δ_ij − s_j) are then nearly 0", on the untrained model and the windows x
    (targets y): the mean size of the gradient of the loss reaching the scores, |∂L/∂score| over every score a query
    may read in rows of more than one key (init_score_grad), and the softmax's slope as its trace, 1 − Σ_j s_j²,
    averaged over those rows (init_softmax_slope: 0 for a one-hot row, 1 − 1/n for an even one). And by row
    length, the number of keys a query reads (2 … context; one list each): the share of rows at 0.98 or more
    (onehot_by_keys) and of pairs of keys 8 or more apart (gap8_by_keys), what init_onehot_share and
    init_score_gap8_share pool."""
    maps, grads = scored(model, x, y)
    T = x.size(1)
    allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    allowed[0] = False                                     # the first row: one key, nothing to weigh
    scores, _ = init_scores(model, x)
    hits, pairs = zip(*(gap_counts(s, 8.0) for s in scores))
    heaviest = torch.stack([m.max(-1).values.flatten(0, 1) for m in maps])    # (blocks, B·H, T)
    return {"init_score_grad": torch.cat([g[..., allowed].abs().flatten() for g in grads]).mean().item(),
            "init_softmax_slope": torch.cat([(1 - (m[:, :, 1:] ** 2).sum(-1)).flatten() for m in maps]).mean().item(),
            "onehot_by_keys": (heaviest >= 0.98).float().mean((0, 1))[1:].tolist(),
            "gap8_by_keys": (sum(hits) / sum(pairs).clamp(min=1))[1:].tolist()}


def not_applicable(corpus: Corpus, c: DataConfig) -> dict[str, str]:
    """What a run on this corpus cannot measure, by the names it would log them under, each with the reason: the
    probe and the heatmap line when they hold characters the text does not (lesson 000's, on your own text), and
    the word-start head statistic on a text without spaces between words."""
    out = {}
    for key, names in (("probe", ("probe_top1", "probe_top1_p", "probe.json")), ("heatmap_line", ("attention.json",))):
        outside = sorted(set(getattr(c, key)) - corpus.stoi.keys())
        if outside:
            out.update(dict.fromkeys(names, f"data.{key} {getattr(c, key)!r} has characters not in this corpus "
                                            f"({''.join(outside)!r})"))
    if not has_word_starts(corpus):
        out["heads_word_start_max"] = "the text has no spaces between words, where the word-start statistic looks"
    return out


def probe(model: GPT, corpus: Corpus, prompt: str, k: int = 5) -> dict:
    """The k likeliest next characters after prompt, and every lowercase letter's probability (lesson 000 names
    'e', 'r' and 'l' after 'To be, or not to b': a letter outside the top k still has its number)."""
    p = next_char_probs(model, corpus.encode(prompt) if not corpus.documents else [corpus.bos, *corpus.encode(prompt)])
    top = p.topk(k)
    letters = {c: i for c, i in corpus.stoi.items() if c.isascii() and c.islower()}
    return {"prompt": prompt, "top": [(corpus.decode([int(i)]), float(v)) for v, i in zip(top.values, top.indices)],
            "letters": {c: float(p[i]) for c, i in letters.items()},
            "leads": {c: lead(p, i) for c, i in letters.items()}}


def lead(p: torch.Tensor, i: int) -> float:
    """How far p[i] stands above the largest of the others: positive when i is the likeliest, by that gap; the
    continuous form of "i is the likeliest", which each seed gives as a number rather than a yes or no."""
    others = torch.cat([p[:i], p[i + 1:]])
    return float(p[i] - others.max())


def samples(model: GPT, corpus: Corpus, prompt: str, length: int, temperature: float, count: int, seed: int):
    """`count` samples, and for a stream their word scores, each a mean over the samples (the prompt not scored);
    for documents, `count` documents, each up to the context."""
    if corpus.documents:
        start, stop = [corpus.bos, *corpus.encode(prompt)], corpus.bos
        return {"texts": [prompt + corpus.decode(generate(model, start, model.config.block_size, temperature,
                                                          seed + i, stop)) for i in range(count)], "scores": {}}
    prompt = prompt or corpus.train_text[0]  # an empty prompt: the text's own first character starts it
    texts = [corpus.decode(generate(model, corpus.encode(prompt), length, temperature, seed + i))
             for i in range(count)]
    spaced, whole, stripped = (training_words(corpus.train_text, how)
                               for how in (Words.SPACES, Words.WHITESPACE, Words.STRIPPED))
    scores = {"word_validity": [word_validity(t, spaced) for t in texts],
              "word_validity_stripped": [word_validity(t, stripped, Words.STRIPPED) for t in texts],
              "real_word_share": [real_word_share(t, whole) for t in texts],
              # lesson 000's sample: speaker names in capitals and a colon, lines broken like verse (the
              # prompt, itself a speaker tag, not counted)
              "speaker_line_share": [speaker_line_share(t) for t in texts],
              "line_length": [line_length(t) for t in texts],
              # "spells most short words correctly": a sample without a short word has no share, and is left out
              "short_word_validity": [short_word_validity(t, stripped) for t in texts],
              # lesson 002's "Words, line breaks, speaker names and punctuation"
              "punctuation_share": [punctuation_share(t) for t in texts]}
    out = {k: sum(v) / len(v) for k, v in ((k, [x for x in v if not math.isnan(x)]) for k, v in scores.items()) if v}
    out["speaker_line_share_train"] = speaker_line_share(corpus.train_text)
    out["line_length_train"] = line_length(corpus.train_text)
    out["punctuation_share_train"] = punctuation_share(corpus.train_text)
    # "breaks lines like verse": where passages of the text as long as a sample lie
    out["line_length_train_low"], out["line_length_train_high"] = line_length_range(corpus.train_text, length)
    return {"texts": [prompt + t for t in texts], "scores": out}


def punctuation_share(text: str) -> float:
    """The share of a text's visible characters (whitespace left out) that are punctuation, neither letters nor
    digits: 0 for a text of words alone."""
    visible = [c for c in text if not c.isspace()]
    return sum(not c.isalnum() for c in visible) / len(visible) if visible else 0.0


@torch.no_grad()
def attention_on(model: GPT, corpus: Corpus, line: str) -> dict:
    """Every head's weights on one line, for heatmaps: {chars, weights[block][head][query][key]}."""
    ids = corpus.encode(line)[: model.config.block_size]
    if corpus.documents:
        ids = [corpus.bos, *ids][: model.config.block_size]
    _, maps = model.attention_maps(torch.tensor([ids], device=next(model.parameters()).device))
    return {"chars": [corpus.decode([i]) for i in ids],
            "weights": [[[[round(w, 5) for w in row] for row in head] for head in m[0].cpu().tolist()] for m in maps]}


def untrained(c: GPTConfig, seed: int) -> GPT:
    """The model a run of this seed started from, built again as the run builds it, right after seeding
    (lm/run/train.py); the caller's random state is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return GPT(c).eval()


@torch.no_grad()
def attention_change(model: GPT, start: GPT, batches, windows: int) -> float:
    """Lesson 000's "the attention weights barely learn", measured on the weights themselves: how far training moved
    them from where they started (`start`, the untrained model), as the total variation distance ½ Σ_j |w − w₀| of
    each query row, averaged over every block, head and query row that has more than one key to weigh, on
    `windows` validation windows (of documents, only rows that read a real character). 0: nothing learned; 1: every
    row's weight moved to keys it had none on."""
    x, y = (torch.cat(t)[:windows] for t in zip(*batches))
    (_, after), (_, before) = model.attention_maps(x), start.attention_maps(x)
    rows = (y >= 0)[:, None, 1:] if (y < 0).any() else torch.ones_like(x, dtype=torch.bool)[:, None, 1:]
    moved = [0.5 * (a - b)[:, :, 1:].abs().sum(-1) for a, b in zip(after, before)]      # (B, H, T - 1) per block
    counted = sum((m * rows).sum() for m in moved)
    return (counted / (rows.sum() * moved[0].size(1) * len(moved)).clamp(min=1)).item()


def score_array_size(model: GPT, batch_size: int) -> int:
    """One layer's score array as the path training uses holds it: the most elements of any attention softmax over
    (context, context) that one training step on a batch of full windows computes as a tensor, forward and backward
    (the fused attention kernels compute the scores in tiles and hold none: 0). Lesson 000 counts batch × heads ×
    context²; this measures what the training step holds. The softmax's output is told by its op, not by its shape:
    queries and keys are (batch, heads, context, head width), the same shape when the context equals the head width.
    The step's gradients are dropped: the model is left with none."""
    T = model.config.block_size
    softmax = {torch.ops.aten._softmax.default, torch.ops.aten._safe_softmax.default}
    largest = 0

    class Largest(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            nonlocal largest
            out = func(*args, **(kwargs or {}))
            if func in softmax and out.shape[-2:] == (T, T):
                largest = max(largest, out.numel())
            return out

    x = torch.zeros(batch_size, T, dtype=torch.long, device=next(model.parameters()).device)
    was_training = model.training
    model.train()
    try:
        with torch.enable_grad(), Largest():
            _, loss = model(x, x)
            loss.backward()
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was_training)
    return largest


@torch.no_grad()
def shuffle_change(model: GPT, x: torch.Tensor, seed: int = 0) -> float:
    """Lesson 000's "shuffling the earlier characters wouldn't change their weighted average", measured on block 1's
    attention: each window's characters before its last one are shuffled, and the largest change of the attention's
    output at the last position, over windows, relative to that output's mean size. Exactly 0 up to float rounding
    without position vectors; with them, the shuffle moves the keys' positions and the output changes."""
    g = torch.Generator().manual_seed(seed)
    T = x.size(1)
    order = torch.stack([torch.cat([torch.randperm(T - 1, generator=g), torch.tensor([T - 1])]) for _ in x])
    shuffled = x.gather(1, order.to(x.device))
    block = model.h[0]
    was_training = model.training
    model.eval()
    try:
        a, b = (block.attn(block.ln_1(model.embed(ids)))[0][:, -1] for ids in (x, shuffled))
    finally:
        model.train(was_training)
    return ((a - b).abs().max() / a.abs().mean()).item()


def last_row_reads(attention: dict) -> dict[str, float]:
    """Lesson 001's "where does the final 'e' look most?", on the heatmap line's last character: for each letter of
    the line, how many heads (over every block) put their heaviest weight on a key holding it
    (heatmap_last_reads_<letter>), and the largest weight any head puts on the keys holding it
    (heatmap_last_weight_<letter>), and the largest lead of a head's weight on a key holding it over its heaviest
    weight on any other key (heatmap_last_lead_<letter>: positive when some head reads it most, by that margin).
    `attention`: attention_on's {chars, weights}."""
    chars = attention["chars"]
    rows = [torch.tensor(head[-1]) for block in attention["weights"] for head in block]   # each (keys,)
    out = {}
    for c in dict.fromkeys(ch for ch in chars if ch.isascii() and ch.isalpha()):
        holds = torch.tensor([ch == c for ch in chars])
        out[f"heatmap_last_reads_{c}"] = float(sum(bool(holds[int(r.argmax())]) for r in rows))
        out[f"heatmap_last_weight_{c}"] = max(float(r[holds].sum()) for r in rows)
        if not holds.all():
            out[f"heatmap_last_lead_{c}"] = max(float(r[holds].max() - r[~holds].max()) for r in rows)
    return out


@torch.no_grad()
def qk_products(model: GPT, x: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor], float]:
    """Every block's raw q·k on the windows x, (B, H, T, T) each, unscaled and unmasked; the attention weights; and
    the scale the model's softmax applies to q·k (1/√d_head, or 1 without the scaling)."""
    inputs = []
    hooks = [b.attn.register_forward_pre_hook(lambda m, args: inputs.append(args[0])) for b in model.h]
    try:
        _, maps = model.attention_maps(x)
    finally:
        for h in hooks:
            h.remove()
    B, T = x.shape
    raw = []
    for block, a in zip(model.h, inputs):
        C, H = a.size(-1), block.attn.n_head
        q, k, _ = (t.view(B, T, H, C // H).transpose(1, 2) for t in block.attn.c_attn(a).split(C, 2))
        raw.append(q @ k.transpose(-2, -1))
    d_head = model.config.n_embd // model.config.n_head
    return raw, maps, 1 / math.sqrt(d_head) if model.config.scale_attn else 1.0


def init_scores(model: GPT, x: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Every block's scores as the softmax sees them (q·k times the model's scale), (B, H, T, T) each, before the
    mask, and the attention weights."""
    raw, maps, scale = qk_products(model, x)
    return [r * scale for r in raw], maps


@torch.no_grad()
def attention_at_init(model: GPT, x: torch.Tensor) -> dict:
    """Lesson 000's case for the 1/√d, measured on the untrained model: the spread (std) of the raw q·k over every
    causal (query, key) pair of every head, the spread of the scores the softmax sees (q·k / √d_head, or q·k
    itself without the scaling), and how one-hot the softmax then is: the mean heaviest weight and the mean
    entropy (nats) of the rows that have more than one key."""
    scores, maps, scale = qk_products(model, x)
    T = x.size(1)
    causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    raw = torch.cat([s[..., causal].flatten() for s in scores])
    w = torch.cat([m[:, :, 1:].flatten(0, 2) for m in maps])      # rows 1 … T-1 of every head: (rows, T)
    return {"init_qk_std": raw.std().item(),
            "init_score_std": raw.std().item() * scale,
            "init_max_weight": w.max(-1).values.mean().item(),
            "init_entropy": torch.special.entr(w).sum(-1).mean().item(),
            # "differences of 8 or more between positions are common": of the pairs of keys one query scores
            "init_score_gap8_share": gap_share([s * scale for s in scores], 8.0),
            # "often almost one-hot, with weights like 0.98 and 0.001": rows whose heaviest weight is 0.98 or more
            "init_onehot_share": (w.max(-1).values >= 0.98).float().mean().item()}


def gap_counts(s: torch.Tensor, gap: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per query row of the scores s, (B, H, T, T) with the query on the second-last axis: how many pairs of the
    keys it may read (causal) have scores `gap` or more apart, and how many pairs there are, each summed over the
    windows and heads: two (T,) tensors."""
    T = s.size(-1)
    allowed = torch.ones(T, T, dtype=torch.bool, device=s.device).tril()
    ordered = s.masked_fill(~allowed, math.inf).sort(-1).values                # each row's keys, ascending
    at_least = torch.searchsorted(ordered, ordered + gap)                      # first key ≥ score + gap
    n = allowed.sum(-1)                                                        # keys per row: i + 1
    real = torch.arange(T, device=s.device) < n[:, None]                       # (T, T): a key of that row
    hits = ((n[:, None] - at_least).clamp(min=0) * real).sum((0, 1, 3))
    return hits, n * (n - 1) // 2 * s.size(0) * s.size(1)


def gap_share(scores: list[torch.Tensor], gap: float) -> float:
    """Of every pair of keys that one query may read (causal), the share whose scores differ by `gap` or more;
    `scores`: per block, (B, H, T, T) with the query on the second-last axis; NaN where no query has two keys (a
    context of 1)."""
    hits, pairs = (sum(t.sum().item() for t in found) for found in zip(*(gap_counts(s, gap) for s in scores)))
    return hits / pairs if pairs else math.nan


def to_json(obj, compact: bool = False) -> str:
    if compact:  # for the larger files: no spaces
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(obj, indent=1, ensure_ascii=False)


# The attention view's lines: the lessons' heatmap line, a few validation lines, and the induction test (a random
# string of letters repeated, so that a head reading what followed the current character last time shows).
VIEW_LINES, VIEW_CHARS = 3, 64


@torch.no_grad()
def attention_lines(model: GPT, corpus: Corpus, heatmap_line: str | None) -> dict:
    """Every head's weights on several named lines, each at most 64 characters (the page shows them as text):
    {lines: [{name, chars, weights[block][head][query][key]}]}; with the mask, a query's row stops at itself. The
    heatmap line is left out (None) where the corpus lacks its characters."""
    size = min(model.config.block_size, VIEW_CHARS)
    start = [corpus.bos] if corpus.documents else []
    if corpus.documents:   # rows [BOS, name, BOS, -1 …]: the names
        found = [[int(i) for i in row[1:] if i >= 0 and i != corpus.bos] for row in corpus.val[:VIEW_LINES]]
    else:                  # the first lines of the validation text with a few words each
        text = corpus.decode(corpus.val[:20_000].tolist()).split("\n")[1:]
        found = [corpus.encode(t) for t in text if len(t) >= 24][:VIEW_LINES]
    letters = [corpus.stoi[c] for c in corpus.chars if c.isalpha()]
    g = torch.Generator().manual_seed(0)
    half = (size - len(start)) // 2
    rand = [letters[i] for i in torch.randint(len(letters), (min(20, half),), generator=g)]
    named = [*([("heatmap line", corpus.encode(heatmap_line))] if heatmap_line else []),
             *((f"validation {k}", ids) for k, ids in enumerate(found, start=1)),
             ("induction test", rand + rand)]
    device = next(model.parameters()).device
    lines = []
    for name, ids in named:
        ids = (start + ids)[:size]
        _, maps = model.attention_maps(torch.tensor([ids], device=device))
        weights = [[[[round(w, 4) for w in (row[: q + 1] if model.config.mask else row)]
                     for q, row in enumerate(head)] for head in m[0].cpu().tolist()] for m in maps]
        lines.append({"name": name, "chars": [corpus.decode([i]) for i in ids], "weights": weights})
    return {"mask": model.config.mask, "lines": lines}
