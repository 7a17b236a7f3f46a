"""A character-level GPT: lesson 000's model, with the toggles the lessons' exercises turn."""
import math

import torch
from torch import nn
from torch.nn import functional as F

from lm.settings.schema import GPTConfig  # noqa: F401  (a run's settings, checked before torch loads)


def n_params(c: GPTConfig) -> int:
    """The parameter count in closed form, for checking a model and predicting one before it is built."""
    d, b = c.n_embd, int(c.bias)
    norm = (d + d * b * (c.norm == "layer")) * c.norm_affine
    block = 4 * d * d + d * b + 8 * d * d + 5 * d * b + 2 * norm   # attention, MLP (d → 4d → d), two norms
    return (c.vocab_size * d + c.block_size * d * c.pos_emb + norm * (c.embed_norm + c.final_norm)
            + c.n_layer * block + c.vocab_size * d + c.vocab_size * b)


def train_flops(c: GPTConfig, batch_size: int) -> int:
    """Model FLOPs of one training step: 6 · N · B · T for the weight matmuls (forward 2, backward 4 per weight per
    token; N = 12 · n_layer · d² + V · d, embeddings excluded as lookups) plus 12 · n_layer · B · T² · d for the
    attention scores and their weighted sums (QKᵀ and AV, forward and backward, the full T×T as the lessons count
    it). Norms, activations, softmax and the optimizer are not counted."""
    B, T, d, L, V = batch_size, c.block_size, c.n_embd, c.n_layer, c.vocab_size
    n_matmul = 12 * L * d * d + V * d
    return 6 * n_matmul * B * T + 12 * L * B * T * T * d


def make_norm(c: GPTConfig) -> nn.Module:
    if c.norm == "layer":
        return nn.LayerNorm(c.n_embd, eps=1e-5, elementwise_affine=c.norm_affine, bias=c.bias and c.norm_affine)
    return nn.RMSNorm(c.n_embd, eps=1e-5, elementwise_affine=c.norm_affine)


def make_dropout(c: GPTConfig) -> nn.Module | None:
    # Without dropout, no module at all: an nn.Identity in its place is still a module call, five a generated character,
    # and module calls with their attribute lookups are over a third of a character's instructions (callgrind).
    return nn.Dropout(c.dropout) if c.dropout else None


def attend(q, k, v, causal: bool = True, scale: float | None = None, past: int = 0, dropout: float = 0.0,
           need_weights: bool = False):
    """Scaled dot-product attention, every head at once: each query of q (B, H, T, d) scores the keys k (B, H,
    past + T, d), `past` of them cached before its window, by q·k · scale (None: 1/√d); with `causal`, a query reads
    no key after its own position. The softmax of the scores weights the values v (B, H, past + T, d_v). Returns the
    blend (B, H, T, d_v) and, with need_weights, the weights (B, H, T, past + T), else None. Dropout on the weights
    (0 when not training)."""
    T = q.size(-2)
    if need_weights:  # the analysis path: the same sums, written out so the weights can be kept
        scores = q @ k.transpose(-2, -1) * (scale or 1 / math.sqrt(q.size(-1)))
        if causal:
            allowed = torch.ones(T, past + T, dtype=torch.bool, device=q.device).tril(past)
            scores = scores.masked_fill(~allowed, -math.inf)
        weights = scores.softmax(-1)
        return F.dropout(weights, dropout, dropout > 0) @ v, weights
    # is_causal aligns the mask to the top left, right only without cached positions; one query reads all.
    allowed = torch.ones(T, past + T, dtype=torch.bool, device=q.device).tril(past) if causal and past else None
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, is_causal=causal and not past, dropout_p=dropout,
                                          scale=scale), None


class CausalSelfAttention(nn.Module):
    def __init__(self, c: GPTConfig, layer: int):
        super().__init__()
        self.layer, self.n_head, self.mask, self.dropout = layer, c.n_head, c.mask, c.dropout
        self.scale = None if c.scale_attn else 1.0   # None: SDPA's own 1/√d_head
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=False)   # W_q, W_k, W_v side by side
        self.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=c.bias)      # W_o joins the heads
        self.resid_dropout = make_dropout(c)

    def forward(self, x, need_weights: bool = False, cache: "KVCache | None" = None):
        B, T, C = x.shape
        # (B, T, 3C) -> (B, T, 3, n_head, head size) -> (3, B, n_head, T, head size) -> q, k, v
        q, k, v = self.c_attn(x).view(B, T, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4).unbind()
        if cache is not None:  # the keys and values of the earlier positions, then these: (B, n_head, P + T, head size)
            k, v = cache.extend(self.layer, k, v)
        P = 0 if cache is None else k.size(2) - T   # positions already cached, before the first of x
        # While torch.export traces the MLflow model (lm/measures/model_flavor.py), T is symbolic and `T > 1` would be a
        # SymBool, which SDPA refuses; a window of one attends to itself either way.
        causal = self.mask and (torch.compiler.is_exporting() or T > 1)
        y, weights = attend(q, k, v, causal, self.scale, P, self.dropout if self.training else 0.0, need_weights)
        y = y.transpose(1, 2).reshape(B, T, C)  # (B, n_head, T, head size) -> (B, T, C): heads side by side
        return self.join(y), weights

    def join(self, y):
        """The heads' outputs, (B, T, C) side by side, joined into what the attention adds to the residual stream."""
        y = self.c_proj(y)
        return y if self.resid_dropout is None else self.resid_dropout(y)


class MLP(nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.act = F.gelu if c.activation == "gelu" else F.relu   # a function: no parameters, so no module to call
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.dropout = make_dropout(c)

    def forward(self, x):
        x = self.c_proj(self.act(self.c_fc(x)))
        return x if self.dropout is None else self.dropout(x)


class Block(nn.Module):
    def __init__(self, c: GPTConfig, layer: int):
        super().__init__()
        self.ln_1, self.attn = make_norm(c), CausalSelfAttention(c, layer)
        self.ln_2, self.mlp = make_norm(c), MLP(c)

    def forward(self, x, need_weights=False, cache=None):
        a, weights = self.attn(self.ln_1(x), need_weights, cache)
        return self.finish(x, a), weights

    def finish(self, x, a):
        """The block after its attention: the stream x that entered it, a what the attention adds to it."""
        x = x + a                       # residual: add, don't replace
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.config = c
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)
        self.wpe = nn.Embedding(c.block_size, c.n_embd) if c.pos_emb else None
        self.drop = make_dropout(c)
        self.ln_e = make_norm(c) if c.embed_norm else None
        self.h = nn.ModuleList(Block(c, i) for i in range(c.n_layer))
        self.ln_f = make_norm(c) if c.final_norm else None
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=c.bias)
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        c = self.config
        if c.init == "pytorch":
            # Lesson 002's model keeps what PyTorch gives every layer: nn.Linear U(±1/√fan_in) for weights and biases
            # (c_attn's fan_in is n_embd, as for the lesson's separate query, key and value layers), nn.Embedding
            # N(0, 1), norms 1 and 0.
            for m in self.modules():
                if m is not self and hasattr(m, "reset_parameters"):
                    m.reset_parameters()
            return
        for name, p in self.named_parameters():
            if c.init == "microgpt":
                nn.init.normal_(p, 0.0, 0.08) if p.dim() == 2 else None
            elif name in ("wte.weight", "wpe.weight"):
                nn.init.normal_(p, 0.0, 1.0)
            elif p.dim() == 2:
                # Lesson 000: spread 1/√fan_in; √2 into the ReLU; the two layers that add to the
                # residual stream shrink by √(2·n_layer) so its variance stays put as blocks stack.
                gain = math.sqrt(2) if name.endswith("c_fc.weight") else 1.0
                if name.endswith("c_proj.weight"):
                    gain = 1 / math.sqrt(2 * c.n_layer)
                nn.init.normal_(p, 0.0, gain / math.sqrt(p.size(1)))
            elif name.endswith("bias"):
                nn.init.zeros_(p)
            # norm gains keep their default of 1

    def _run(self, idx, need_weights: bool = False, cache: "KVCache | None" = None):
        start = len(cache) if cache is not None else 0  # the position of idx's first character in its window
        return self.rest(self.embed(idx, start), need_weights=need_weights, cache=cache)

    def embed(self, idx, start: int = 0):
        """The residual stream entering the first block: token ids (B, T) -> (B, T, n_embd), the first of them at
        position start."""
        T = idx.size(1)
        if start + T > self.config.block_size:
            raise ValueError(f"{start + T} characters exceed the context of {self.config.block_size}")
        x = self.wte(idx)
        if self.wpe is not None:
            # Positions start … start + T - 1 as a slice of the table: the rows and gradients of wpe(arange(...)),
            # without the arange and the lookup (24 against 61 thousand instructions a character, the add included;
            # callgrind). Training is the same to the bit (20 Adam steps, base and microgpt-with-dropout configs).
            x = x + self.wpe.weight[start:start + T]
        if self.drop is not None:
            x = self.drop(x)
        return x if self.ln_e is None else self.ln_e(x)

    def rest(self, x, first: int = 0, need_weights: bool = False, cache: "KVCache | None" = None):
        """The forward pass from the residual stream x, (B, T, n_embd), as it enters block `first` (from 0): the
        logits and those blocks' attention weights. Knock-out runs a block's targets from there (lm/knockout/measure.py)."""
        maps = []
        for block in list(self.h)[first:]:
            x, weights = block(x, need_weights, cache)
            maps.append(weights)
        return self.lm_head(x if self.ln_f is None else self.ln_f(x)), maps

    def forward(self, idx, targets=None, cache: "KVCache | None" = None):
        """Logits for the next character at every position and, given targets, their mean cross-entropy. With a
        cache, idx continues the window whose keys and values it holds, and leaves its own there."""
        logits, _ = self._run(idx, cache=cache)
        if targets is None:
            return logits, None
        # Targets of -1 are padding after a document's end; they carry no loss.
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)

    def attention_maps(self, idx):
        """Logits and every block's attention weights, each (batch, head, query, key)."""
        return self._run(idx, need_weights=True)


def token_losses(model: GPT, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of every prediction, (batch, position); padding scores 0."""
    return losses_of(model(x)[0], y)


def losses_of(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of every prediction from its logits, (batch, position, vocabulary) -> (batch, position)."""
    return F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-1, reduction="none").view_as(y)


@torch.no_grad()
def honest_loss(model: GPT, x: torch.Tensor, y: torch.Tensor) -> float:
    """Each prediction made from its prefix alone, as in generation: no later character is ever fed in, whatever
    the mask. For a masked model this equals the ordinary loss; without the mask it is the true one."""
    total = 0.0
    for t in range(1, x.size(1) + 1):
        logits, _ = model(x[:, :t])
        total += F.cross_entropy(logits[:, -1], y[:, t - 1], ignore_index=-1, reduction="sum").item()
    return total / (y >= 0).sum().item()


class KVCache:
    """The keys and values every block computed for the characters of a window so far, for generation: each new
    character then costs one position's work rather than the window's. Valid only for a model with the mask, whose
    earlier positions never read later ones, and only in eval mode (dropout would differ)."""

    def __init__(self, n_layer: int):
        self.k: list[torch.Tensor | None] = [None] * n_layer   # per block, (B, n_head, positions, head size)
        self.v: list[torch.Tensor | None] = [None] * n_layer

    def __len__(self) -> int:
        """The positions held; by the last block, which a forward pass extends last."""
        return 0 if self.k[-1] is None else self.k[-1].size(2)

    def extend(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Block `layer`'s cached keys and values with k and v appended along the positions."""
        # A cat, not a buffer of block_size positions written in place: the write and the slice that reads it back are
        # more calls than the cat, and a generated character took 5% more instructions with them (callgrind).
        if self.k[layer] is not None:
            k, v = torch.cat([self.k[layer], k], 2), torch.cat([self.v[layer], v], 2)
        self.k[layer], self.v[layer] = k, v
        return k, v
