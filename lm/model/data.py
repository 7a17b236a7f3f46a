"""The corpora: a pinned, hash-checked file or your own text, its character vocabulary, its splits and its batches."""
import math
import random

import torch
from torch.utils.data import IterableDataset

from lm.model.download import locate  # noqa: F401  (where the file is: lm/model/download.py)
from lm.settings.corpus_file import read_text, sha256  # noqa: F401  (the file: lm/settings/corpus_file.py)
from lm.settings.config import RunConfig
from lm.settings.errors import ConfigError, DataError  # noqa: F401  (raised here, caught before torch loads)
from lm.settings.schema import DataConfig  # noqa: F401  (a run's settings, checked before torch loads)


class Corpus:
    """Characters as ids. A text is one long stream; documents are rows [BOS, c1..cn, BOS, -1 …]."""

    def __init__(self, c: DataConfig, text: str):
        self.name, self.documents = c.corpus, c.documents
        if c.documents:
            docs = [line.strip() for line in text.splitlines() if line.strip()]
            random.Random(c.shuffle_seed).shuffle(docs)
            self.chars = sorted(set("".join(docs)))
            self.bos = len(self.chars)
            self.stoi = {ch: i for i, ch in enumerate(self.chars)}
            n_val = max(1, int(len(docs) * c.val_fraction))
            train_docs, val_docs = docs[:-n_val], docs[-n_val:]
            width = max(map(len, docs)) + 2
            self.train, self.val = (self._rows(d, width) for d in (train_docs, val_docs))
            self.train_text = "\n".join(train_docs)
        else:
            self.chars, self.bos = sorted(set(text)), None
            self.stoi = {ch: i for i, ch in enumerate(self.chars)}
            ids = torch.tensor(self.encode(text), dtype=torch.long)
            split = int((1 - c.val_fraction) * len(ids))
            self.train, self.val = ids[:split], ids[split:]
            self.train_text = text[:split]

    @property
    def vocab_size(self) -> int:
        return len(self.chars) + (self.bos is not None)

    def encode(self, s: str) -> list[int]:
        bad = sorted(set(s) - self.stoi.keys())
        if bad:
            raise ValueError(f"{''.join(bad)!r} {'is' if len(bad) == 1 else 'are'} not in the "
                             f"{len(self.chars)}-character vocabulary of {self.name}")
        return [self.stoi[ch] for ch in s]

    def decode(self, ids) -> str:
        return "".join("\n" if i == self.bos else self.chars[i] for i in ids)

    def _rows(self, docs: list[str], width: int) -> torch.Tensor:
        rows = torch.full((len(docs), width), -1, dtype=torch.long)
        for r, doc in enumerate(docs):
            ids = [self.bos, *self.encode(doc), self.bos]
            rows[r, :len(ids)] = torch.tensor(ids)
        return rows

    def batch(self, split: str, batch_size: int, block_size: int, generator: torch.Generator):
        """Random training examples: windows of block_size characters, or documents, with targets one on."""
        data = self.train if split == "train" else self.val
        if self.documents:
            return self.windows_of(data[torch.randint(len(data), (batch_size,), generator=generator)], block_size)
        starts = torch.randint(len(data) - block_size - 1, (batch_size, 1), generator=generator)
        chunk = data[starts + torch.arange(block_size + 1)]  # index arithmetic, no Python loop
        return chunk[:, :-1], chunk[:, 1:]

    def windows_of(self, rows: torch.Tensor, block_size: int):
        """Documents' rows cut to the context: inputs and their targets one on, padding read as BOS and never scored."""
        if rows.size(1) < block_size + 1:
            rows = torch.nn.functional.pad(rows, (0, block_size + 1 - rows.size(1)), value=-1)
        x, y = rows[:, :block_size].clone(), rows[:, 1:block_size + 1]
        x[x < 0] = self.bos  # what padding reads is never scored
        return x, y

    def baselines(self) -> dict[str, float]:
        """Uniform guessing, ln V, and a bigram table (counts + 1) fitted on train and scored on validation."""
        V = self.vocab_size

        def pairs(data):
            if self.documents:
                a, b = data[:, :-1].flatten(), data[:, 1:].flatten()
                keep = (a >= 0) & (b >= 0)
                return a[keep], b[keep]
            return data[:-1], data[1:]

        counts = torch.ones(V, V, dtype=torch.float64)
        a, b = pairs(self.train)
        counts.index_put_((a, b), torch.ones(len(a), dtype=torch.float64), accumulate=True)
        logp = (counts / counts.sum(1, keepdim=True)).log()
        a, b = pairs(self.val)
        return {"uniform_loss": math.log(V), "bigram_loss": -logp[a, b].mean().item()}


def load_corpus(c: DataConfig) -> Corpus:
    corpus = Corpus(c, read_text(locate(c)))
    if corpus.vocab_size != c.vocab_size:
        raise DataError(f"data.vocab_size={c.vocab_size} but {c.filename} has {corpus.vocab_size} symbols")
    return corpus


def prepare(cfg: RunConfig) -> Corpus:
    """The run's corpus, with the checks that need the data: the file itself, and every prompt the run will read.
    Plain PyTorch, no Lightning: a suite's own process checks every corpus before its first run (4 s of Lightning's
    imports it has no other use for)."""
    corpus = load_corpus(cfg.data)
    for key in ("probe", "heatmap_line", "sample_prompt"):
        if key != "sample_prompt" and not cfg.data.pinned:  # your own text: not measured (probes.not_applicable)
            continue
        try:
            corpus.encode(getattr(cfg.data, key))
        except ValueError as e:
            raise ConfigError(f"data.{key}: {e}") from None
    return corpus


class TrainBatches(IterableDataset):
    """An endless stream of training batches. The batch for step k depends only on (seed, k), so a resumed
    run sees exactly the batches it would have seen, with no sampler state to save."""

    def __init__(self, corpus: Corpus, batch_size: int, block_size: int, seed: int, start_step: int = 0):
        self.corpus, self.batch_size, self.block_size = corpus, batch_size, block_size
        self.seed, self.start_step = seed, start_step

    def __iter__(self):
        step = self.start_step
        while True:
            yield train_batch(self.corpus, self.batch_size, self.block_size, self.seed, step)
            step += 1


def train_batch(corpus: Corpus, batch_size: int, block_size: int, seed: int, step: int):
    """The training batch of step `step` (from 0) of a run of this seed: the same whenever it is asked for."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + step)
    return corpus.batch("train", batch_size, block_size, g)


def val_batches(corpus: Corpus, n_batches: int, batch_size: int, block_size: int, split: str = "val") -> list:
    """A fixed set of validation windows, the same for every run, so runs can be compared; split="train": as many
    fixed windows of the training text, for the training loss lesson 002 reports beside the validation loss."""
    g = torch.Generator().manual_seed(1)
    return [corpus.batch(split, batch_size, block_size, g) for _ in range(n_batches)]


# Predictions per batch of held_out_windows: 64 windows of lesson 000's 64 characters, more of shorter ones.
HELD_OUT_BATCH = 4096


def held_out_windows(corpus: Corpus, block_size: int, limit: int = 0) -> list:
    """Every window of the held-out text, for the final validation: non-overlapping windows of block_size characters
    covering it in order, each scoring the character after each of its own, the last one shorter, so that every
    prediction of the held-out text is scored once; of documents, every held-out document, cut to the context. In
    batches of about HELD_OUT_BATCH predictions. The same windows, in the same order, for every run of a corpus and a
    context, so two runs' window losses pair window by window. limit: only the first `limit` windows (0: all), for
    toy runs."""
    per_batch = max(1, HELD_OUT_BATCH // block_size)
    if corpus.documents:
        x, y = corpus.windows_of(corpus.val, block_size)
        return list(zip(x[:limit or None].split(per_batch), y[:limit or None].split(per_batch)))
    data = corpus.val
    n = (len(data) - 1) // block_size
    whole = min(n, limit or n)
    x, y = data[:whole * block_size].view(whole, block_size), data[1:whole * block_size + 1].view(whole, block_size)
    batches = list(zip(x.split(per_batch), y.split(per_batch)))
    if whole == n and len(data) - 1 > n * block_size:
        batches.append((data[n * block_size:-1][None], data[n * block_size + 1:][None]))
    return batches
