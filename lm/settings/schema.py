"""The typed settings of a run's model, data, training and sampling: plain dataclasses that check their own values.

They live apart from the code that uses them (lm/model/model.py, lm/model/data.py, lm/run/module.py, lm/model/sample.py), which needs
torch and Lightning, so that a command checks its input in a fraction of a second before it loads either (4 to
6 s; see `make bench`).
"""
import math
import re
from dataclasses import dataclass, field


@dataclass
class GPTConfig:
    vocab_size: int = 65
    block_size: int = 64        # context: the most characters any prediction reads
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    mask: bool = True           # causal mask; without it every position can read its own answer
    pos_emb: bool = True        # learned position vectors; without them attention sees a bag of characters
    scale_attn: bool = True     # scores q·k / √d_head; without it their spread at init is √d_head, not 1
    norm: str = "layer"         # "layer" (lesson 000) or "rms" (microgpt)
    norm_affine: bool = True    # a learned gain in every norm (and a shift, for layer norm with biases)
    embed_norm: bool = False    # microgpt normalises the embeddings before the first block
    final_norm: bool = True     # microgpt goes straight from the last block to the output layer
    activation: str = "relu"    # "relu" (lessons 000 and 001) or "gelu" (lesson 002)
    bias: bool = True           # biases on W_o, the MLP and the output layer; W_q, W_k, W_v never have one
    dropout: float = 0.0
    init: str = "lesson000"     # "lesson000": N(0, gain²/fan_in); "microgpt": N(0, 0.08²) everywhere; "pytorch":
    #                             each layer's own default (lesson 002's: nn.Linear, nn.Embedding, nn.LayerNorm)

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            if getattr(self, name) <= 0:
                raise ValueError(f"model.{name}={getattr(self, name)} must be positive")
        if self.n_embd % self.n_head:
            raise ValueError(f"model.n_embd={self.n_embd} is not divisible by model.n_head={self.n_head}")
        choices = {"norm": ("layer", "rms"), "activation": ("relu", "gelu"),
                   "init": ("lesson000", "microgpt", "pytorch")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"model.{name}={getattr(self, name)!r} must be one of {', '.join(allowed)}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"model.dropout={self.dropout} must be in [0, 1)")


@dataclass
class DataConfig:
    corpus: str = "shakespeare"
    filename: str = "tinyshakespeare.txt"
    url: str = ""
    sha256: str = ""            # empty: your own text, whose hash is read from the file and recorded, not demanded
    vocab_size: int = 65        # the file's symbols (+ BOS for documents); checked when it is read (0: from the file)
    documents: bool = False     # one document per line, each wrapped in BOS (microgpt), or one long text
    path: str | None = None     # a local copy; otherwise $TINYGPT_DATA_DIR, then the download cache
    cache_dir: str = "~/.cache/tinygpt"
    val_fraction: float = 0.1   # the last tenth is never trained on
    shuffle_seed: int = 42      # documents are shuffled before the split, as microgpt does
    probe: str = "To be, or not to b"             # next-character probabilities after this
    heatmap_line: str = "What is the time o' the day?"
    sample_prompt: str = "JULIET:\n"

    def __post_init__(self):
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"data.val_fraction={self.val_fraction} must be between 0 and 1")

    @property
    def pinned(self) -> bool:
        """One of the lessons' corpora, downloaded from its URL and held to its hash; else a text of your own."""
        return bool(self.url)


@dataclass
class TrainConfig:
    steps: int = 3000
    batch_size: int = 32
    lr: float = 0.003
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])
    optimizer: str = "adam"     # "adam" (lessons 000, 001) or "adamw" (lesson 002)
    weight_decay: float = 0.0
    schedule: str = "constant"  # "constant", "linear" decay to 0 (microgpt) or "cosine" to min_lr after warmup
    warmup_steps: int = 0
    min_lr: float = 0.0
    grad_clip: float = 0.0      # 0: no clipping

    def __post_init__(self):
        for name in ("steps", "batch_size"):
            if getattr(self, name) <= 0:
                raise ValueError(f"train.{name}={getattr(self, name)} must be positive")
        if not self.lr > 0:
            raise ValueError(f"train.lr={self.lr} must be positive")
        if self.optimizer not in ("adam", "adamw"):
            raise ValueError(f"train.optimizer={self.optimizer!r} must be adam or adamw")
        if self.schedule not in ("constant", "linear", "cosine"):
            raise ValueError(f"train.schedule={self.schedule!r} must be constant, linear or cosine")

    def lr_factor(self, step: int) -> float:
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        if self.schedule == "linear":
            return 1 - step / self.steps
        if self.schedule == "cosine":
            done = (step - self.warmup_steps) / max(1, self.steps - self.warmup_steps)
            floor = self.min_lr / self.lr
            return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, done)))
        return 1.0


@dataclass
class SampleConfig:
    length: int = 400           # characters generated per sample
    temperature: float = 0.8    # below 1 plays safe, above 1 takes risks
    count: int = 1              # samples per run
    seed: int = 1

    def __post_init__(self):
        check_temperature(self.temperature, "sample.temperature")
        if self.length <= 0 or self.count <= 0:
            raise ValueError(f"sample.length={self.length} and sample.count={self.count} must be positive")


def check_temperature(t: float, name: str = "temperature") -> None:
    if not t > 0:
        raise ValueError(f"{name}={t} must be above 0: the scores are divided by it")


ESCAPES = {"n": "\n", "t": "\t", "\\": "\\"}


def unescape(text: str, name: str = "prompt") -> str:
    """A prompt as typed on a command line, with \\n, \\t and \\\\ decoded; any other backslash is refused, so that
    none is taken silently for a letter."""
    parts = re.split(r"(\\.?)", text, flags=re.S)
    bad = [p for p in parts[1::2] if p[1:] not in ESCAPES]
    if bad:
        raise ValueError(f"{name}: {bad[0]!r} is not an escape; the escapes are \\n (newline), \\t (tab) "
                         f"and \\\\ (a backslash)")
    return "".join(ESCAPES[p[1:]] if i % 2 else p for i, p in enumerate(parts))
