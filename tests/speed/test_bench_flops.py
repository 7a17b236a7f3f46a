"""The FLOP count that `make bench` divides by: the formula the README states, and the matmuls it times."""
import pytest

from lm.settings import config
from lm.tools import bench


@pytest.mark.parametrize("overrides", [[], ["model.n_layer=4", "model.n_embd=128"], ["profile=microgpt"]])
def test_the_timed_matmuls_and_attention_add_up_to_the_stated_formula(overrides):
    c = config.load(overrides).model
    B, T, d, L = 32, c.block_size, c.n_embd, c.n_layer
    matmuls = sum(2 * m * k * n for m, k, n in bench.matmul_shapes(c, B))
    assert matmuls == 6 * (12 * L * d * d + c.vocab_size * d) * B * T
    assert bench.train_flops(c, B) == matmuls + 12 * L * B * T * T * d


def test_the_base_config_does_1_46_gflop_a_step():
    assert bench.train_flops(config.load([]).model, 32) == 1_460_404_224
