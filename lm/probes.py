"""What a trained model shows, measured once at the end of a run: the numbers and files MLflow keeps."""
import json
import math

import pandas as pd
import torch

from analysis import heads
from lm.data import Corpus, DataConfig
from lm.model import GPT
from lm.module import honest_loss, token_losses
from lm.sample import generate, next_char_probs, real_word_share, training_words, word_validity


@torch.no_grad()
def validation(model: GPT, batches, honest_windows: int = 0) -> dict:
    by_pos = torch.zeros(model.config.block_size, dtype=torch.float64)
    n_pos = torch.zeros_like(by_pos)
    for x, y in batches:
        losses = token_losses(model, x, y).double().cpu()
        mask = (y >= 0).cpu()
        by_pos += losses.sum(0)
        n_pos += mask.sum(0)
    total, count = by_pos.sum().item(), n_pos.sum().item()
    out = {"val_loss": total / count, "loss_by_position": (by_pos / n_pos.clamp(min=1)).tolist()}
    out["val_perplexity"] = math.exp(out["val_loss"])
    if honest_windows:
        x, y = (torch.cat(t)[:honest_windows] for t in zip(*batches))
        out["honest_val_loss"] = honest_loss(model, x, y)
    return out


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
    if not corpus.documents and " " not in corpus.stoi:
        out["heads_word_start_max"] = "the text has no spaces between words, where the word-start statistic looks"
    return out


def probe(model: GPT, corpus: Corpus, prompt: str, k: int = 5) -> dict:
    p = next_char_probs(model, corpus.encode(prompt) if not corpus.documents else [corpus.bos, *corpus.encode(prompt)])
    top = p.topk(k)
    return {"prompt": prompt, "top": [(corpus.decode([int(i)]), float(v)) for v, i in zip(top.values, top.indices)]}


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
    words, stripped = training_words(corpus.train_text), training_words(corpus.train_text, strip=True)
    scores = {"word_validity": [word_validity(t, words) for t in texts],
              "word_validity_stripped": [word_validity(t, stripped, strip=True) for t in texts],
              "real_word_share": [real_word_share(t, words) for t in texts]}
    return {"texts": [prompt + t for t in texts], "scores": {k: sum(v) / len(v) for k, v in scores.items()}}


@torch.no_grad()
def attention_on(model: GPT, corpus: Corpus, line: str) -> dict:
    """Every head's weights on one line, for heatmaps: {chars, weights[block][head][query][key]}."""
    ids = corpus.encode(line)[: model.config.block_size]
    if corpus.documents:
        ids = [corpus.bos, *ids][: model.config.block_size]
    _, maps = model.attention_maps(torch.tensor([ids], device=next(model.parameters()).device))
    return {"chars": [corpus.decode([i]) for i in ids],
            "weights": [[[[round(w, 5) for w in row] for row in head] for head in m[0].cpu().tolist()] for m in maps]}


@torch.no_grad()
def head_statistics(model: GPT, corpus: Corpus, batches, windows: int, skip: int) -> pd.DataFrame:
    x = torch.cat([b[0] for b in batches])[:windows]
    _, maps = model.attention_maps(x)
    boundary = {corpus.stoi[c] for c in " \n" if c in corpus.stoi} | ({corpus.bos} if corpus.documents else set())
    table = heads.head_table([m.float().cpu() for m in maps], x.cpu(), boundary, skip=min(skip, x.size(1) - 1))
    if not corpus.documents and " " not in corpus.stoi:  # no words to start: see not_applicable
        table["word_start_score"] = math.nan
    exclude = {corpus.bos} if corpus.documents else set()
    induction = heads.induction_score(model, model.config.vocab_size, exclude=exclude)
    return table.merge(induction, on=["block", "head"])


def to_json(obj) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False)
