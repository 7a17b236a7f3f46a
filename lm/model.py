"""A character-level GPT: lesson 000's model, with the toggles the lessons' exercises turn."""
import math

import torch
from torch import nn
from torch.nn import functional as F

from lm.schema import GPTConfig  # noqa: F401  (a run's settings, checked before torch loads)


def n_params(c: GPTConfig) -> int:
    """The parameter count in closed form, for checking a model and predicting one before it is built."""
    d, b = c.n_embd, int(c.bias)
    norm = (d + d * b * (c.norm == "layer")) * c.norm_affine
    block = 4 * d * d + d * b + 8 * d * d + 5 * d * b + 2 * norm   # attention, MLP (d → 4d → d), two norms
    return (c.vocab_size * d + c.block_size * d * c.pos_emb + norm * (c.embed_norm + c.final_norm)
            + c.n_layer * block + c.vocab_size * d + c.vocab_size * b)


def make_norm(c: GPTConfig) -> nn.Module:
    if c.norm == "layer":
        return nn.LayerNorm(c.n_embd, eps=1e-5, elementwise_affine=c.norm_affine, bias=c.bias and c.norm_affine)
    return nn.RMSNorm(c.n_embd, eps=1e-5, elementwise_affine=c.norm_affine)


class CausalSelfAttention(nn.Module):
    def __init__(self, c: GPTConfig, layer: int):
        super().__init__()
        self.layer, self.n_head, self.mask, self.dropout = layer, c.n_head, c.mask, c.dropout
        self.c_attn = nn.Linear(c.n_embd, 3 * c.n_embd, bias=False)   # W_q, W_k, W_v side by side
        self.c_proj = nn.Linear(c.n_embd, c.n_embd, bias=c.bias)      # W_o joins the heads
        self.resid_dropout = nn.Dropout(c.dropout)

    def forward(self, x, need_weights: bool = False):
        B, T, C = x.shape
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in self.c_attn(x).split(C, 2))
        causal = self.mask and T > 1
        weights = None
        if need_weights:  # the analysis path: the same sums, written out so the weights can be kept
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
            if causal:
                scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=x.device).tril(), -math.inf)
            weights = scores.softmax(-1)
            y = F.dropout(weights, self.dropout, self.training) @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                               dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y)), weights


class MLP(nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.act = nn.GELU() if c.activation == "gelu" else nn.ReLU()
        self.c_proj = nn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c: GPTConfig, layer: int):
        super().__init__()
        self.ln_1, self.attn = make_norm(c), CausalSelfAttention(c, layer)
        self.ln_2, self.mlp = make_norm(c), MLP(c)

    def forward(self, x, need_weights=False):
        a, weights = self.attn(self.ln_1(x), need_weights)
        x = x + a                       # residual: add, don't replace
        return x + self.mlp(self.ln_2(x)), weights


class GPT(nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.config = c
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)
        self.wpe = nn.Embedding(c.block_size, c.n_embd) if c.pos_emb else None
        self.drop = nn.Dropout(c.dropout)
        self.ln_e = make_norm(c) if c.embed_norm else nn.Identity()
        self.h = nn.ModuleList(Block(c, i) for i in range(c.n_layer))
        self.ln_f = make_norm(c) if c.final_norm else nn.Identity()
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=c.bias)
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        c = self.config
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

    def _run(self, idx, need_weights: bool = False):
        T = idx.size(1)
        if T > self.config.block_size:
            raise ValueError(f"{T} characters exceed the context of {self.config.block_size}")
        x = self.wte(idx)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(T, device=idx.device))
        x = self.ln_e(self.drop(x))
        maps = []
        for block in self.h:
            x, weights = block(x, need_weights)
            maps.append(weights)
        return self.lm_head(self.ln_f(x)), maps

    def forward(self, idx, targets=None):
        """Logits for the next character at every position and, given targets, their mean cross-entropy."""
        logits, _ = self._run(idx)
        if targets is None:
            return logits, None
        # Targets of -1 are padding after a document's end; they carry no loss.
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)

    def attention_maps(self, idx):
        """Logits and every block's attention weights, each (batch, head, query, key)."""
        return self._run(idx, need_weights=True)

    def decoder(self):
        """Generation with a KV cache, in eval mode: a function (ids, start) -> the logits after the last of ids,
        the characters at positions start, start+1, … of the window, each reading the cached keys and values of
        those before it (several at once only at start 0, a fresh window). forward()'s sums, from the modules' own
        weights and functions called directly, into buffers allocated once: one character's matmuls are so small
        that the module machinery around them would cost more than they do (twice the time, measured). One
        character's linear layers are matrix-vector products: F.linear's numbers on one row."""
        if self.training:
            raise RuntimeError("decoder() is for eval mode, where dropout does nothing")
        C, size = self.config.n_embd, self.config.block_size

        def linear(m: nn.Linear):
            W, b = m.weight, m.bias
            if b is None:
                return lambda v: torch.mv(W, v) if v.dim() == 1 else F.linear(v, W)
            return lambda v: torch.addmv(b, W, v) if v.dim() == 1 else F.linear(v, W, b)

        wte, wpe = self.wte.weight, self.wpe.weight if self.wpe is not None else None
        ln_e, ln_f, head = self.ln_e.forward, self.ln_f.forward, linear(self.lm_head)
        blocks = [(torch.empty(size, 3 * C, device=wte.device, dtype=wte.dtype),  # q, k, v of every position
                   b.attn.n_head, b.attn.mask, b.ln_1.forward, linear(b.attn.c_attn), linear(b.attn.c_proj),
                   b.ln_2.forward, linear(b.mlp.c_fc), b.mlp.act.forward, linear(b.mlp.c_proj)) for b in self.h]

        def step(ids: list[int], start: int) -> torch.Tensor:
            T, end = len(ids), start + len(ids)
            if end > size:
                raise ValueError(f"{end} characters exceed the context of {size}")
            if T > 1 and start:
                raise ValueError("several characters at once only start a window")
            # (C,) for one character, else (T, C): the rows the embeddings would look up
            x = wte[ids[0]] if T == 1 else wte[torch.tensor(ids, device=wte.device)]
            if wpe is not None:
                x = x + (wpe[start] if T == 1 else wpe[:end])
            x = ln_e(x)
            for qkv, n_head, mask, ln_1, c_attn, c_proj, ln_2, c_fc, act, mlp_proj in blocks:
                qkv[start:end] = c_attn(ln_1(x))
                q, k, v = qkv[:end].view(1, end, 3, n_head, C // n_head).transpose(1, 3).unbind(2)
                y = F.scaled_dot_product_attention(q[:, :, start:], k, v, is_causal=mask and T > 1)
                x = x + c_proj(y.transpose(1, 2).reshape(x.shape))
                x = x + mlp_proj(act(c_fc(ln_2(x))))
            return head(ln_f(x if T == 1 else x[-1]))

        return step
