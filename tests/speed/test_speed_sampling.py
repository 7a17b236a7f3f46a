"""Generation's fast path (the model's own forward with a KV cache) gives the characters of the plain one."""
import pytest
import torch

from lm.model.data import load_corpus
from lm.model.model import GPT, GPTConfig, KVCache
from lm.model.sample import _pick, _uniforms, generate
from lm.settings import config

CONFIGS = {"base": GPTConfig(),
           "microgpt-like": GPTConfig(norm="rms", activation="gelu", bias=False, embed_norm=True, final_norm=False),
           "no positions": GPTConfig(pos_emb=False, n_layer=1, n_head=2)}


@pytest.mark.parametrize("name", CONFIGS)
def test_the_cached_forward_gives_the_full_window_logits(name):
    torch.manual_seed(0)
    m = GPT(CONFIGS[name]).eval()
    x = torch.randint(0, 65, (1, 64))
    with torch.no_grad():
        full = m(x)[0][0]
        cache = KVCache(m.config.n_layer)
        got = [m(x[:, :20], cache=cache)[0][0]]                                  # a window's start at once
        got += [m(x[:, i:i + 1], cache=cache)[0][0] for i in range(20, 40)]      # then one character at a time
        got += [m(x[:, 40:64], cache=cache)[0][0]]                               # and several after cached ones
        assert len(cache) == 64
    assert torch.allclose(torch.cat(got), full, atol=1e-5)


def test_the_cache_refuses_what_the_context_cannot_hold():
    m = GPT(GPTConfig(block_size=8)).eval()
    cache = KVCache(m.config.n_layer)
    with pytest.raises(ValueError, match="9 characters exceed the context of 8"):
        m(torch.zeros(1, 9, dtype=torch.long), cache=KVCache(m.config.n_layer))
    m(torch.zeros(1, 6, dtype=torch.long), cache=cache)
    with pytest.raises(ValueError, match="9 characters exceed the context of 8"):
        m(torch.zeros(1, 3, dtype=torch.long), cache=cache)


def test_a_trained_model_samples_the_same_characters_with_and_without_the_cache():
    """Trained weights give peaked distributions, where the two paths' round-off could tip a near tie: 200 steps
    of Adam on Shakespeare, then 2,000 characters at two temperatures."""
    corpus = load_corpus(config.load([]).data)
    torch.manual_seed(0)
    m = GPT(GPTConfig(n_layer=1, block_size=32))
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(200):
        _, loss = m(*corpus.batch("train", 16, 32, g))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 2.8                          # well below the uniform 4.17: it has learnt something
    prompt = corpus.encode("ROMEO:\n")
    for temperature in (0.5, 1.0):
        cached = generate(m, prompt, 2000, temperature, seed=1)
        assert cached == generate(m, prompt, 2000, temperature, seed=1, cache=False)
        assert len(set(corpus.decode(cached).split())) > 50    # words, not one character over and over


@pytest.mark.parametrize("name", CONFIGS)
def test_1000_cached_characters_are_the_uncached_ones(name):
    torch.manual_seed(1)
    m = GPT(CONFIGS[name])
    prompt = torch.randint(0, 65, (8,)).tolist()
    for seed in (1, 2):
        a = generate(m, prompt, 1000, 0.8, seed=seed, cache=True)
        b = generate(m, prompt, 1000, 0.8, seed=seed, cache=False)
        assert a == b and len(a) == 1000
    assert m.training                                 # generate puts the mode back


def test_the_uniforms_drawn_a_chunk_at_a_time_are_those_drawn_one_at_a_time():
    g = torch.Generator().manual_seed(3)
    one_at_a_time = [torch.rand(1, generator=g, dtype=torch.float64).item() for _ in range(10)]
    assert list(_uniforms(3, 10, chunk=4)) == one_at_a_time


def test_generate_picks_the_characters_one_pick_a_step_would():
    """The MLflow model's loop (lm/measures/model_flavor.py) draws with _pick, one uniform a character; within a
    window generate gives the same characters for the same seed."""
    torch.manual_seed(2)
    m = GPT(GPTConfig()).eval()
    ids, g = [1, 2, 3], torch.Generator().manual_seed(4)
    with torch.no_grad():
        while len(ids) < m.config.block_size:
            ids.append(_pick(m(torch.tensor([ids]))[0][0, -1], 0.8, g))
    assert generate(m, [1, 2, 3], len(ids) - 3, 0.8, seed=4) == ids[3:]
