"""What each attention head does, measured from its weights: one row per (block, head).

TransformerLens comparison. prev_token_score and dup_token_score follow
TransformerLens's detect_head with error_measure="mul": for one window,
score = sum(A * P) / sum(A) over the (query, key) grid, where A is the head's
attention and P the 0/1 detection pattern (previous token: key j = i - 1;
duplicate token: keys j < i holding the same character as query i); the
per-window scores are then averaged over windows, as detect_head averages over
prompts. Only query rows i >= skip enter either sum, so without exclusions the
denominator is the number of those rows. The _excl variants zero the diagonal
first (exclude_current_token=True), which removes the current character's
weight from numerator and denominator; exclude_bos is never applied, since a
character window has no BOS token.

Blocks and heads are numbered from 1, as in the lessons. Everything here works
on weights without the causal mask too: the formulas are the same, but offsets
and distances may then be negative (a head reading ahead).
"""
import math

import pandas as pd
import torch

# The docstring's second paragraph on one line, for reports to quote.
TL_CONVENTION = " ".join(__doc__.split("\n\n")[1].split())

N_OFFSETS = 9  # the mass profile m0 … m8


def _label(block: int, head: int, offset: int, share: float, heaviest: float) -> str:
    where = "itself" if offset == 0 else f"{offset} back" if offset > 0 else f"{-offset} ahead"
    return f"block {block}, head {head}: {where} at {share:.0%} of positions; average heaviest weight {heaviest:.2f}"


def _block_stats(w: torch.Tensor, idx: torch.Tensor, is_boundary: torch.Tensor, skip: int) -> dict:
    """Every statistic for one block's weights w (B, H, T, T), each a tensor (H,)."""
    B, H, T, _ = w.shape
    i = torch.arange(skip, T, device=w.device)             # the query positions kept
    j = torch.arange(T, device=w.device)
    W = w[:, :, skip:, :]                                   # (B, H, Q, T)
    Q = T - skip
    out = {}

    # Lesson 000's offset: the most common distance back to the heaviest key, pooled over windows.
    off = i - W.argmax(-1)                                  # (B, H, Q), in [-(T-1), T-1]
    counts = torch.zeros(H, 2 * T - 1, device=w.device)
    counts.scatter_add_(1, (off + T - 1).transpose(0, 1).reshape(H, -1), torch.ones(H, B * Q, device=w.device))
    out["offset"] = counts.argmax(1) - (T - 1)              # ties go to the smallest offset
    out["offset_share"] = counts.max(1).values / (B * Q)
    out["max_weight"] = W.max(-1).values.mean((0, 2))

    # Mass d back; keys before the window's start carry nothing.
    back = i[:, None] - torch.arange(N_OFFSETS, device=w.device)           # (Q, 9)
    mass = W.gather(-1, back.clamp(min=0).expand(B, H, Q, N_OFFSETS)) * (back >= 0)
    for d, m in enumerate(mass.mean((0, 2)).unbind(-1)):
        out[f"m{d}"] = m

    # TransformerLens "mul" scores, one ratio per window, then averaged (see the module docstring).
    prev = (j == i[:, None] - 1).float()                                    # (Q, T)
    dup = ((idx[:, skip:, None] == idx[:, None, :]) & (j < i[:, None])).float()[:, None]  # (B, 1, Q, T)
    total = W.sum((2, 3))                                                   # (B, H)
    diag = W.gather(-1, i.expand(B, H, Q)[..., None]).squeeze(-1).sum(-1)  # weight on the current token
    for name, pattern in (("prev_token_score", prev), ("dup_token_score", dup)):
        hit = (W * pattern).sum((2, 3))                     # patterns never include the diagonal
        for suffix, den in (("", total), ("_excl", total - diag)):
            ratio = torch.where(den > 0, hit / den.clamp(min=1e-12), torch.zeros_like(den))
            out[name + suffix] = ratio.mean(0)

    ent = torch.special.entr(W).sum(-1)                     # (B, H, Q), nats; 0 ln 0 = 0
    out["entropy"] = ent.mean((0, 2))
    # A row of one key has no spread to normalise; with skip >= 1 there is none.
    many = i >= 1
    out["entropy_norm"] = (ent[..., many] / torch.log(i[many] + 1.0)).mean((0, 2))
    out["distance"] = (W * (i[:, None] - j).float()).sum(-1).mean((0, 2))

    # Half the L1 distance to the head's average pattern lies in [0, 1]: 0 when the content changes nothing.
    l1 = (W - W.mean(0, keepdim=True)).abs().sum(-1) / 2
    out["positional_score"] = 1 - l1.mean((0, 2))

    # The boundary before the current word: the last space or newline at or before each position,
    # which for a query that is not itself a boundary is the one strictly before it.
    pos = torch.where(is_boundary, j, -1)
    last = pos.cummax(1).values[:, skip:]                   # (B, Q)
    ok = (~is_boundary[:, skip:] & (last >= 0)).float()
    at_start = W.gather(-1, last.clamp(min=0)[:, None, :, None].expand(B, H, Q, 1)).squeeze(-1)
    n_ok = ok.sum()
    out["word_start_score"] = ((at_start * ok[:, None]).sum((0, 2)) / n_ok if n_ok > 0
                               else torch.full((H,), math.nan, device=w.device))
    return out


@torch.no_grad()
def head_table(maps, idx, boundary_ids, skip: int = 8) -> pd.DataFrame:
    """One row per (block, head) of the statistics above, from maps as GPT.attention_maps returns them.

    idx is the (batch, T) character ids the maps were computed on; boundary_ids the ids of the word
    boundaries (space and newline). Positions i < skip never count as queries.
    word_start_score is the mean weight a query puts on the last boundary before it; queries that
    are themselves a boundary, or have none before them, are left out (NaN if that leaves none).
    """
    idx = torch.as_tensor(idx)
    T = idx.size(-1)
    if not 0 <= skip < T:
        raise ValueError(f"skip={skip} leaves no query positions in windows of {T}")
    rows = []
    for b, w in enumerate(maps, start=1):
        w = w.detach().float()
        ids = idx.to(w.device).reshape(-1, T)
        is_boundary = torch.isin(ids, torch.tensor(sorted(boundary_ids), dtype=ids.dtype, device=w.device))
        stats = {k: v.tolist() for k, v in _block_stats(w, ids, is_boundary, skip).items()}
        for h in range(w.size(1)):
            row = {"block": b, "head": h + 1, **{k: v[h] for k, v in stats.items()}}
            row["label"] = _label(b, h + 1, row["offset"], row["offset_share"], row["max_weight"])
            rows.append(row)
    return pd.DataFrame(rows)


@torch.no_grad()
def induction_score(model, vocab_size: int, L: int = 20, n: int = 32, seed: int = 0, exclude=()) -> pd.DataFrame:
    """Mean weight, in the second copy of n random sequences repeated twice, on the character that
    followed the current one last time (key i - L + 1 for query i in [L, 2L))."""
    L = min(L, model.config.block_size // 2)
    allowed = torch.tensor([v for v in range(vocab_size) if v not in set(exclude)])
    g = torch.Generator().manual_seed(seed)
    seq = allowed[torch.randint(len(allowed), (n, L), generator=g)]
    p = next(model.parameters(), None)
    x = torch.cat([seq, seq], 1).to(p.device if p is not None else "cpu")

    was_training = model.training
    model.eval()
    try:
        _, maps = model.attention_maps(x)
    finally:
        model.train(was_training)

    i = torch.arange(L, 2 * L)
    rows = []
    for b, w in enumerate(maps, start=1):
        w = w.detach().float().cpu()[:, :, L:, :]           # (n, H, L, 2L)
        key = (i - L + 1).expand(*w.shape[:2], L)[..., None]
        score = w.gather(-1, key).squeeze(-1).mean((0, 2))
        rows += [{"block": b, "head": h + 1, "induction_score": s} for h, s in enumerate(score.tolist())]
    return pd.DataFrame(rows)


def headline(table: pd.DataFrame) -> dict[str, float]:
    """A few numbers for MLflow metrics; a column that is missing or all NaN is left out."""
    wanted = {
        "heads_prev_token_max": ("prev_token_score", "max"),
        "heads_dup_token_max": ("dup_token_score", "max"),
        "heads_word_start_max": ("word_start_score", "max"),
        "heads_induction_max": ("induction_score", "max"),
        "heads_positional_max": ("positional_score", "max"),
        "heads_entropy_norm_mean": ("entropy_norm", "mean"),
        "heads_max_weight_mean": ("max_weight", "mean"),
    }
    out = {}
    for key, (column, how) in wanted.items():
        if column in table:
            value = float(table[column].agg(how))
            if math.isfinite(value):
                out[key] = value
    # Lesson 000's table, as numbers: the best share of positions at which a head reads 1 (or 2) back.
    for d in (1, 2):
        shares = table.loc[table["offset"] == d, "offset_share"]
        out[f"heads_offset{d}_share_max"] = float(shares.max()) if len(shares) else 0.0
    return out


def strongest(table: pd.DataFrame, column: str) -> tuple[int, int]:
    """(block, head) of the row with the largest value in column."""
    row = table.loc[table[column].idxmax()]
    return int(row["block"]), int(row["head"])
