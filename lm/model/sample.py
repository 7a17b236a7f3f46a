"""Generating text, next-character probabilities, and how many generated words are real ones."""


import math
import random
import re
import string
from bisect import bisect_left
from enum import Enum

import torch

from lm.model.model import GPT, KVCache
from lm.settings.schema import SampleConfig, check_temperature, unescape  # noqa: F401  (checked before torch loads)


def _pick(logits: torch.Tensor, temperature: float, g: torch.Generator) -> int:
    # Inverse CDF with one uniform draw: the same seed picks the same character from the same probabilities.
    return _draw(logits, temperature, torch.rand((), generator=g, dtype=torch.float64).item())


def _draw(logits: torch.Tensor, temperature: float, u: float) -> int:
    """The id of the character whose share of the cumulative probabilities from logits (vocab,) at the temperature
    holds u (in [0, 1))."""
    cdf = (logits.double() / temperature).softmax(-1).cumsum(-1).tolist()
    # The sums searched as a list (bisect_left: torch.searchsorted's side, the same index), not as a tensor: no slices
    # and no 0-d tensors made and read back (56 against 76 thousand instructions a character, callgrind).
    # hi=vocab - 1: a u past the last sum's round-off picks the last character, as min(index, vocab - 1) would
    return bisect_left(cdf, cdf[-1] * u, 0, len(cdf) - 1)


def _uniforms(seed: int, n: int, chunk: int = 4096):
    """The n uniforms that n calls of torch.rand(1) would draw from a generator with this seed, in that order,
    drawn a chunk at a time: one call for many characters, and memory bounded whatever n."""
    g = torch.Generator().manual_seed(seed)
    for start in range(0, n, chunk):
        yield from torch.rand(min(chunk, n - start), generator=g, dtype=torch.float64).tolist()


@torch.inference_mode()
def generate(model: GPT, prompt: list[int], n: int, temperature: float, seed: int,
             stop: int | None = None, cache: bool = True) -> list[int]:
    """n characters after the prompt. The window restarts from its last half once it is full, so no prediction
    reads more than block_size characters and a KV cache stays valid; cache=False recomputes the window every
    step and gives the same characters. A model without the mask is always run uncached, since with it the
    earlier positions read the later ones too."""
    check_temperature(temperature)
    was_training = model.training
    model.eval()
    T = model.config.block_size
    cache = cache and model.config.mask
    device = next(model.parameters()).device
    out = list(prompt)
    window = out[-T:]
    kv = KVCache(model.config.n_layer) if cache else None
    fresh = torch.tensor([window], device=device)   # (1, characters): what the next forward pass reads
    for u in _uniforms(seed, n):
        logits = model(fresh, cache=kv)[0][0, -1]
        nxt = _draw(logits, temperature, u)
        if nxt == stop:
            break
        out.append(nxt)
        window.append(nxt)
        if len(window) > T:  # a fresh window, its last half
            window = window[-max(1, T // 2):]
            kv = KVCache(model.config.n_layer) if cache else None
            fresh = torch.tensor([window], device=device)
        elif cache:   # only the character the cache has not seen; torch.full: a third of torch.tensor([[nxt]])'s work
            fresh = torch.full((1, 1), nxt, device=device)
        else:
            fresh = torch.tensor([window], device=device)
    model.train(was_training)
    return out[len(prompt):]


@torch.no_grad()
def next_char_probs(model: GPT, prompt: list[int], temperature: float = 1.0) -> torch.Tensor:
    check_temperature(temperature)
    T = model.config.block_size
    device = next(model.parameters()).device
    logits, _ = model(torch.tensor([prompt[-T:]], device=device))
    return (logits[0, -1].double() / temperature).softmax(-1).float().cpu()


class Words(Enum):
    """How a text is cut into words."""
    SPACES = "spaces"           # lesson 000's "(split on spaces)": a line break inside a piece stays in it
    WHITESPACE = "whitespace"   # at any whitespace
    STRIPPED = "stripped"       # at any whitespace, punctuation at both ends dropped ('lord,' is 'lord'): ours


def words_of(text: str, how: Words = Words.SPACES) -> list[str]:
    """The text's words, cut as `how` says; never an empty one."""
    if how == Words.SPACES:
        return [w for w in text.split(" ") if w]
    words = text.split()
    return [w for w in (w.strip(string.punctuation) for w in words) if w] if how == Words.STRIPPED else words


def word_validity(text: str, vocabulary: set[str], how: Words = Words.SPACES) -> float:
    """Lesson 000's "what fraction of the generated words (split on spaces) appear somewhere in the training text?":
    the share of the text's words found among the training text's, both cut the same way (`vocabulary`:
    training_words(train_text, how))."""
    words = words_of(text, how)
    return sum(w in vocabulary for w in words) / len(words) if words else 0.0


# Project choice: lesson 000 does not say how short "short" is; at most 4 letters holds the short words of its own
# sample ("In", "net", "him", "will", "To", "his", "send").
SHORT_WORD = 4


def short_word_validity(text: str, vocabulary: set[str]) -> float:
    """Lesson 000's "spells most short words correctly": of the words of at most SHORT_WORD letters (punctuation at
    both ends stripped), the share found in the training text; `vocabulary` is its stripped words. NaN when the
    text has no short word."""
    words = [w for w in words_of(text, Words.STRIPPED) if len(w) <= SHORT_WORD]
    return sum(w in vocabulary for w in words) / len(words) if words else math.nan


SPEAKER = re.compile(r"[A-Z][A-Z' ]*[A-Z]:")  # a line that is a name in capitals followed by a colon


def speaker_line_share(text: str) -> float:
    """The share of non-empty lines that are a speaker tag in lesson 000's sense, a name in capitals followed by a
    colon ('JULIET:'), nothing else on the line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return sum(bool(SPEAKER.fullmatch(ln)) for ln in lines) / len(lines) if lines else 0.0


def line_length(text: str) -> float:
    """The mean length in characters of the non-empty lines: verse breaks its lines short, prose runs on."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return sum(map(len, lines)) / len(lines) if lines else 0.0


def line_length_range(text: str, length: int, share: float = 0.95, n: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Where the mean line length (line_length) of `length` characters of the text lies: the middle `share` of it over
    n passages of that length drawn from the text (a fixed draw), its low and high ends."""
    g = random.Random(seed)
    found = sorted(line_length(text[s:s + length]) for s in (g.randrange(len(text) - length) for _ in range(n)))
    cut = (1 - share) / 2
    return found[int(cut * (n - 1))], found[int((1 - cut) * (n - 1))]


def real_word_share(text: str, vocabulary: set[str]) -> float:
    """The share of all the text's characters, whitespace included, that lie in whitespace-separated words found
    in the training text (`vocabulary`: training_words(train_text, Words.WHITESPACE)). Unlike word validity it stays
    low for garbage with hardly a word in it (a run of newlines with a stray 'O' scores 100% validity when cut at
    whitespace)."""
    return sum(len(w) for w in words_of(text, Words.WHITESPACE) if w in vocabulary) / len(text) if text else 0.0


def training_words(train_text: str, how: Words = Words.SPACES) -> set[str]:
    return set(words_of(train_text, how))


