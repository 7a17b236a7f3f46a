"""Each head's statistics measured from its attention weights: STATISTICS's entries (lm/heads/table.py) computed on
one block's weights at a time, the induction score, which needs a prompt of its own, and both on a run's model and
validation windows (head_statistics)."""
import math
from functools import cached_property

import pandas as pd
import torch

from lm.heads.table import N_OFFSETS, STATISTICS
from lm.model.data import Corpus
from lm.model.model import GPT


class Weights:
    """One block's weights w (B, H, T, T) with what every statistic reads: the query rows kept (positions
    i >= skip that are real characters), the keys, the characters and the word boundaries."""

    def __init__(self, w: torch.Tensor, idx: torch.Tensor, is_boundary: torch.Tensor, skip: int,
                 real: torch.Tensor | None = None):
        B, H, T, _ = w.shape
        self.B, self.H, self.T, self.skip = B, H, T, skip
        self.i = torch.arange(skip, T, device=w.device)            # the query positions kept
        self.j = torch.arange(T, device=w.device)
        self.W = w[:, :, skip:, :]                                  # (B, H, Q, T)
        self.Q = T - skip
        self.idx, self.is_boundary = idx, is_boundary
        keep = torch.ones(B, T, dtype=torch.bool, device=w.device) if real is None else real.to(w.device).bool()
        self.rows = keep[:, skip:].float()                          # (B, Q): 1 for a query row that counts

    def mean(self, x: torch.Tensor) -> torch.Tensor:
        """(B, H, Q) → (H,): the mean over the query rows that count; NaN if none does."""
        n = self.rows.sum()
        if n == 0:
            return torch.full((self.H,), math.nan, device=x.device)
        return (x * self.rows[:, None]).sum((0, 2)) / n

    @cached_property
    def offsets(self) -> torch.Tensor:
        """(H, 2T - 1): how many counted query rows have their heaviest key at each distance back, -(T-1) … T-1."""
        off = self.i - self.W.argmax(-1)                            # (B, H, Q), in [-(T-1), T-1]
        counts = torch.zeros(self.H, 2 * self.T - 1, device=off.device)
        weight = self.rows[:, None].expand_as(off).transpose(0, 1).reshape(self.H, -1)
        counts.scatter_add_(1, (off + self.T - 1).transpose(0, 1).reshape(self.H, -1), weight)
        return counts

    def share_back(self, d: int) -> torch.Tensor:
        """The share of counted query rows whose heaviest key is d back."""
        return self.offsets[:, d + self.T - 1] / self.rows.sum().clamp(min=1)

    @cached_property
    def mass(self) -> torch.Tensor:
        """(H, 9): the mean weight d = 0 … 8 back; keys before the window's start carry nothing."""
        back = self.i[:, None] - torch.arange(N_OFFSETS, device=self.W.device)            # (Q, 9)
        m = self.W.gather(-1, back.clamp(min=0).expand(self.B, self.H, self.Q, N_OFFSETS)) * (back >= 0)
        return torch.stack([self.mean(m[..., d]) for d in range(N_OFFSETS)], -1)

    @cached_property
    def entropy(self) -> torch.Tensor:
        return torch.special.entr(self.W).sum(-1)                  # (B, H, Q), nats; 0 ln 0 = 0

    def tl_score(self, pattern: torch.Tensor, exclude_current: bool) -> torch.Tensor:
        """TransformerLens "mul" score of a 0/1 pattern: one ratio per window, then averaged (see lm/heads/table.py)."""
        W = self.W * self.rows[:, None, :, None]
        hit = (W * pattern).sum((2, 3))                             # patterns never include the diagonal
        den = W.sum((2, 3))                                         # (B, H)
        if exclude_current:
            den = den - W.gather(-1, self.i.expand(self.B, self.H, self.Q)[..., None]).squeeze(-1).sum(-1)
        ratio = torch.where(den > 0, hit / den.clamp(min=1e-12), torch.zeros_like(den))
        return ratio.mean(0)

    def prev_pattern(self) -> torch.Tensor:
        return (self.j == self.i[:, None] - 1).float()                                    # (Q, T)

    def dup_pattern(self) -> torch.Tensor:
        same = self.idx[:, self.skip:, None] == self.idx[:, None, :]
        return (same & (self.j < self.i[:, None])).float()[:, None]                       # (B, 1, Q, T)

    def entropy_norm(self) -> torch.Tensor:
        # A row of one key has no spread to normalise; it counts as 0 (with skip >= 1 there is none).
        norm = torch.log(self.i + 1.0)
        ent = torch.where(norm > 0, self.entropy / norm.clamp(min=1e-12), torch.zeros_like(self.entropy))
        return self.mean(ent)

    def positional(self) -> torch.Tensor:
        # Half the L1 distance to the head's average pattern lies in [0, 1]: 0 when the content changes nothing.
        rows = self.rows[:, None, :, None]
        average = (self.W * rows).sum(0, keepdim=True) / rows.sum(0, keepdim=True).clamp(min=1)
        return 1 - self.mean((self.W - average).abs().sum(-1) / 2)

    def word_start(self) -> torch.Tensor:
        # The boundary before the current word: the last space or newline at or before each position,
        # which for a query that is not itself a boundary is the one strictly before it.
        pos = torch.where(self.is_boundary, self.j, -1)
        last = pos.cummax(1).values[:, self.skip:]                  # (B, Q)
        ok = (~self.is_boundary[:, self.skip:] & (last >= 0)).float() * self.rows
        at_start = self.W.gather(-1, last.clamp(min=0)[:, None, :, None].expand(self.B, self.H, self.Q, 1))
        n_ok = ok.sum()
        if n_ok == 0:
            return torch.full((self.H,), math.nan, device=self.W.device)
        return (at_start.squeeze(-1) * ok[:, None]).sum((0, 2)) / n_ok


def _label(block: int, head: int, offset: int, share: float, heaviest: float) -> str:
    where = "itself" if offset == 0 else f"{offset} back" if offset > 0 else f"{-offset} ahead"
    return f"block {block}, head {head}: {where} at {share:.0%} of positions; average heaviest weight {heaviest:.2f}"


@torch.no_grad()
def head_table(maps, idx, boundary_ids, skip: int = 8, real=None) -> pd.DataFrame:
    """One row per (block, head) of the statistics in STATISTICS, from maps as GPT.attention_maps returns them.

    idx is the (batch, T) character ids the maps were computed on; boundary_ids the ids of the word
    boundaries (space and newline). Positions i < skip never count as queries, nor do positions where `real`
    (batch, T) is False: the padding after a document's end.
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
        weights = Weights(w, ids, is_boundary, skip, None if real is None else torch.as_tensor(real).reshape(-1, T))
        stats = {s.name: s.function(weights).tolist() for s in STATISTICS if s.function is not None}
        for h in range(w.size(1)):
            row = {"block": b, "head": h + 1, **{k: v[h] for k, v in stats.items()}}
            row["offset"] = int(row["offset"])
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


def has_word_starts(corpus: Corpus) -> bool:
    """Whether the word-start head statistic can look anywhere: documents (names), or a text with spaces."""
    return corpus.documents or " " in corpus.stoi


@torch.no_grad()
def head_statistics(model: GPT, corpus: Corpus, batches, windows: int, skip: int) -> pd.DataFrame:
    """head_table on validation windows; of documents, only the rows that read a real character (a
    name's BOS and letters), never the padding after its end, whose target is -1."""
    x, y = (torch.cat(t)[:windows] for t in zip(*batches))
    _, maps = model.attention_maps(x)
    boundary = {corpus.stoi[c] for c in " \n" if c in corpus.stoi} | ({corpus.bos} if corpus.documents else set())
    real = (y >= 0).cpu() if corpus.documents else None
    table = head_table([m.float().cpu() for m in maps], x.cpu(), boundary, skip=min(skip, x.size(1) - 1), real=real)
    if not has_word_starts(corpus):  # see lm/measures/probes.py not_applicable
        table["word_start_score"] = math.nan
    exclude = {corpus.bos} if corpus.documents else set()
    induction = induction_score(model, model.config.vocab_size, exclude=exclude)
    return table.merge(induction, on=["block", "head"])
