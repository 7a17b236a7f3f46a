"""What a knock-out table holds, without torch (the report reads these tables and never imports it): what is knocked
out (Target, Part), how (Mode), the metric names a run logs, how many windows it is measured on, and each head's
type; lm/knockout/measure.py measures it.
"""
from dataclasses import dataclass
from enum import Enum

# The first 512 windows of the fixed validation set: the intact and the knocked-out model read the same
# characters, so the difference is far steadier than either loss; every window costs 2 passes per head.
WINDOWS = 512


class Mode(str, Enum):
    MEAN = "mean"   # the output replaced by its mean over the batches and positions
    ZERO = "zero"   # the output replaced by zeros


class Part(str, Enum):
    HEAD = "head"
    ATTN = "attn"
    MLP = "mlp"


@dataclass(frozen=True)
class Target:
    """What is knocked out; blocks and heads are numbered from 1, as the report numbers them."""
    part: Part
    block: int
    head: int | None = None

    @property
    def key(self) -> str:
        return f"b{self.block}h{self.head}" if self.part is Part.HEAD else f"b{self.block}_{self.part.value}"


def metric(target: Target, mode: Mode) -> str:
    """`knockout_b1h3` for mean ablation, `knockout_zero_b1h3` for zero ablation."""
    return f"knockout_{'zero_' if mode is Mode.ZERO else ''}{target.key}"


# --- what a head is, and what the run logs ---------------------------------------------------------------
# A head's type is its strongest statistic: each of these is a mean weight on the keys its pattern names
# (heads.csv's columns), so they compare on one scale.
TYPES = {"previous": "prev_token_score", "two back": "m2", "itself": "m0", "duplicate": "dup_token_score",
         "induction": "induction_score", "word start": "word_start_score"}


