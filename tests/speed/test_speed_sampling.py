"""Generation's fast path (a decoder over buffers allocated once) gives the characters of the plain one."""
import pytest
import torch

from lm.model import GPT, GPTConfig
from lm.sample import generate

CONFIGS = {"base": GPTConfig(),
           "microgpt-like": GPTConfig(norm="rms", activation="gelu", bias=False, embed_norm=True, final_norm=False),
           "no positions": GPTConfig(pos_emb=False, n_layer=1, n_head=2)}


@pytest.mark.parametrize("name", CONFIGS)
def test_the_decoder_gives_the_forward_logits(name):
    torch.manual_seed(0)
    m = GPT(CONFIGS[name]).eval()
    x = torch.randint(0, 65, (1, 64))
    with torch.no_grad():
        full = m(x)[0][0]
        want = [full[19]] + [full[i] for i in range(20, 64)]
        step = m.decoder()
        got = [step(x[0, :20].tolist(), 0)] + [step([int(x[0, i])], i) for i in range(20, 64)]
        again = step(x[0, :5].tolist(), 0)    # a fresh window reuses the buffers
    for a, b in zip(want, got):
        assert torch.allclose(a, b, atol=1e-5)
    assert torch.allclose(again, m(x[:, :5])[0][0, -1], atol=1e-5)


def test_the_decoder_refuses_what_the_cache_cannot_hold():
    m = GPT(GPTConfig(block_size=8)).eval()
    step = m.decoder()
    with pytest.raises(ValueError, match="exceed the context"):
        step(list(range(9)), 0)
    step([1, 2], 0)
    with pytest.raises(ValueError, match="only start a window"):
        step([3, 4], 2)
    with pytest.raises(RuntimeError, match="eval mode"):
        m.train().decoder()


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
