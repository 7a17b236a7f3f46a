"""What each attention head does, measured from its weights: one row per (block, head), one column per entry of
STATISTICS, the table that computing (lm/heads/measure.py), logging (the heads_* metrics, lm/heads/summary.py),
the report and the claims all read. This module holds the table, without torch or pandas.

TransformerLens comparison. prev_token_score and dup_token_score follow
TransformerLens's detect_head with error_measure="mul": for one window,
score = sum(A * P) / sum(A) over the (query, key) grid, where A is the head's
attention and P the 0/1 detection pattern (previous token: key j = i - 1;
duplicate token: keys j < i holding the same character as query i); the
per-window scores are then averaged over windows, as detect_head averages over
prompts. Only query rows i >= skip that hold a real character (never padding
after a document's end) enter either sum, so without exclusions the denominator
is the number of those rows. The _excl variants zero the diagonal
first (exclude_current_token=True), which removes the current character's
weight from numerator and denominator; exclude_bos is never applied, since a
character window has no BOS token.

Blocks and heads are numbered from 1, as in the lessons. Everything here works
on weights without the causal mask too: the formulas are the same, but offsets
and distances may then be negative (a head reading ahead).
"""
from dataclasses import dataclass
from typing import Callable

# The docstring's second paragraph on one line, for reports to quote.
TL_CONVENTION = " ".join(__doc__.split("\n\n")[1].split())

N_OFFSETS = 9  # the mass profile m0 … m8


@dataclass(frozen=True)
class Statistic:
    """One head statistic: a column of heads.csv, how it is measured, and how runs log and reports show it."""
    name: str                                  # the column of heads.csv
    function: Callable | None                  # head_measure.Weights → (H,), one block's heads; None: apart
    label: str                                 # how the report names it
    unit: str = ""
    percent: bool = False                      # a share of 1, shown as a percentage
    aggregate: tuple[str, ...] = ()            # logged aggregated over heads: "max" or "mean" (over all blocks)
    per_block: bool = False                    # also over each block's heads alone
    metric: str = ""                           # the stem of the logged names (heads_<metric>_<how>[_block<b>])

    def metric_name(self, how: str, block: int | None = None) -> str:
        return f"heads_{self.metric or self.name}_{how}" + (f"_block{block}" if block is not None else "")


def _mass(d: int) -> Callable:
    return lambda s: s.mass[:, d]


STATISTICS: list[Statistic] = [
    # Lesson 000's offset: the most common distance back to the heaviest key, pooled over windows.
    Statistic("offset", lambda s: (s.offsets.argmax(1) - (s.T - 1)).float(),  # ties go to the smallest offset
              "most common offset", "characters back"),
    Statistic("offset_share", lambda s: s.offsets.max(1).values / s.rows.sum().clamp(min=1),
              "share of positions at the most common offset", percent=True),
    # Lesson 002's "a head that looks at the current or the previous character (a sharp diagonal)": 0 back.
    Statistic("offset0_share", lambda s: s.share_back(0), "itself: share of positions", percent=True,
              aggregate=("max",), per_block=True),
    # Lesson 000's table as numbers: the share of positions at which the heaviest key is 1 (or 2) back.
    Statistic("offset1_share", lambda s: s.share_back(1), "1 back: share of positions", percent=True,
              aggregate=("max",), per_block=True),
    Statistic("offset2_share", lambda s: s.share_back(2), "2 back: share of positions", percent=True,
              aggregate=("max",), per_block=True),
    Statistic("max_weight", lambda s: s.mean(s.W.max(-1).values), "heaviest weight", aggregate=("mean",)),
    # m0, the weight on itself, also as its least over the heads: lesson 001's "each spreads its attention over
    # recent letters, the start marker and itself".
    *(Statistic(f"m{d}", _mass(d), f"weight {d} back", aggregate=("min",) if d == 0 else ())
      for d in range(N_OFFSETS)),
    # Lesson 001's "the start marker": the weight on the window's first key (a name's BOS), and what a head that
    # spread its weight evenly would put on any one key, to read both against.
    Statistic("start_mass", lambda s: s.mean(s.W[..., 0]), "weight on the first key", percent=True,
              aggregate=("min",)),
    Statistic("uniform_share", lambda s: s.mean((1.0 / (s.i + 1.0)).expand_as(s.W[..., 0])),
              "an even head's weight on one key", percent=True, aggregate=("mean",)),
    # Lesson 000's "spread over the last 3": the weight on the characters 1, 2 and 3 back.
    Statistic("last3_mass", lambda s: s.mass[:, 1:4].sum(-1), "weight 1–3 back", percent=True,
              aggregate=("mean", "min"), per_block=True),
    # ... and "spread" over them, not at one fixed offset: 1 when most of the weight (more than half) lies 1-3 back
    # and no one of those three offsets holds more than half of it, else 0. Summed over a block: how many heads
    # spread. Four heads that each read 1 back at 100% count 0.
    Statistic("last3_spread", lambda s: ((s.mass[:, 1:4].sum(-1) > 0.5) & (s.mass[:, 1:4].max(-1).values <= 0.5))
              .float(), "spread over 1–3 back (1: yes)", aggregate=("sum",), per_block=True),
    Statistic("prev_token_score", lambda s: s.tl_score(s.prev_pattern(), False), "previous-token score",
              aggregate=("max",), metric="prev_token"),
    Statistic("prev_token_score_excl", lambda s: s.tl_score(s.prev_pattern(), True),
              "previous-token score, current excluded"),
    Statistic("dup_token_score", lambda s: s.tl_score(s.dup_pattern(), False), "duplicate-token score",
              aggregate=("max",), metric="dup_token"),
    Statistic("dup_token_score_excl", lambda s: s.tl_score(s.dup_pattern(), True),
              "duplicate-token score, current excluded"),
    Statistic("entropy", lambda s: s.mean(s.entropy), "entropy", "nats"),
    Statistic("entropy_norm", lambda s: s.entropy_norm(), "entropy (normalised)", aggregate=("mean",)),
    Statistic("distance", lambda s: s.mean((s.W * (s.i[:, None] - s.j).float()).sum(-1)), "mean distance back",
              "characters"),
    # Lesson 000's block 2 "wherever the content says": a low positional score is a head that reads by content.
    Statistic("positional_score", lambda s: s.positional(), "positional score", aggregate=("max", "mean"),
              per_block=True, metric="positional"),
    Statistic("word_start_score", lambda s: s.word_start(), "word-start score", aggregate=("max",), per_block=True,
              metric="word_start"),
    Statistic("induction_score", None, "induction score", aggregate=("max",), metric="induction"),
]
BY_NAME = {s.name: s for s in STATISTICS}


def percent_metrics(blocks=range(1, 9)) -> set[str]:
    """The logged names of the statistics that are shares of 1."""
    return {s.metric_name(how, b) for s in STATISTICS if s.percent for how in s.aggregate
            for b in (None, *(blocks if s.per_block else ()))}


