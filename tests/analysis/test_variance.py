"""The seeds' variance pooled over a metric's variants (analysis/verdicts/variance.py): the prior's fit, a curve's
steps, and the variants the prior does not speak for."""
import math

import numpy as np
import pytest

from analysis.verdicts import Numbers, table, variance
from analysis.verdicts.decision import Outcome
from lm.settings.claims import Claim
from lm.settings.exercises import Exercise


def seeds(rng: np.random.Generator, sd: float, n: int = 3) -> list[float]:
    return list(rng.normal(0.0, sd, n))


def test_variants_whose_variances_agree_lend_a_prior_of_many_degrees_of_freedom():
    rng = np.random.default_rng(0)
    prior = variance.priors({("m", "end"): [seeds(rng, 0.1) for _ in range(40)]})["m", "end"]
    assert prior.groups == 40 and prior.df > 4 and prior.var == pytest.approx(0.01, rel=0.5)


def test_a_curves_steps_count_as_one_variant_and_do_not_inflate_the_spread():
    """Twelve variants' curves, twelve steps each, every step the same seed variance: the prior counts 12 groups (the
    steps are the same seeds) and reads the spread of all 144 log-variances. Dividing their squared deviations by the
    12 groups' 11 took it for a spread thirteen times theirs: 0.1 degrees of freedom, as the validation loss's
    curve once had (0.4)."""
    rng = np.random.default_rng(1)
    rows = [((f"v{v}",), seeds(rng, 0.01)) for v in range(12) for _ in range(12)]
    prior = variance.priors({("val_loss", "curve"): rows})["val_loss", "curve"]
    assert prior.groups == 12 and prior.df > 1


def test_a_variance_the_prior_calls_impossible_is_its_variants_own():
    """A check that is 0 up to float rounding in one variant, of order 0.01 in the metric's others: moderating it would
    lend it their spread. Far below (or above) what the prior predicts, its own seeds judge it; seeds that agree
    exactly (no spread to test) keep the prior's."""
    assert variance.moderate(1e-12, 2, 1.6e-4, 0.25) == (1e-12, 2)
    assert variance.moderate(1.0, 2, 1e-4, 10.0) == (1.0, 2)
    assert variance.moderate(1e-4, 2, 1e-4, math.inf) == (1e-4, math.inf)
    s2, df = variance.moderate(2e-4, 2, 1e-4, 4.0)
    assert df == 6 and s2 == pytest.approx((4 * 1e-4 + 2 * 2e-4) / 6)
    assert variance.moderate(0.0, 2, 1e-4, 4.0) == pytest.approx((4 * 1e-4 / 6, 6))


def test_a_check_that_holds_to_float_rounding_is_firm_beside_noisier_variants_of_its_metric():
    """nopos's shuffle: about 2e-6 on every seed without positions, against a line of 1e-4; with positions the same
    metric spreads by 0.01 between seeds. Reproduced, not "within seed noise" on the others' spread."""
    rng = np.random.default_rng(2)
    final = {"nopos": {"shuffle_change": {1: 2.1e-6, 2: 1.9e-6, 3: 2.0e-6}}}
    final |= {f"pos{i}": {"shuffle_change": dict(enumerate(0.3 + np.array(seeds(rng, 0.01)), 1))} for i in range(30)}
    claim = Claim(text="unchanged", check="nopos.shuffle_change < 1e-4")
    ex = Exercise(name="own", title="own", lesson="-", measures="-", variants={v: [] for v in final}, claims=[claim])
    (row,) = table({"own": Numbers(ex, final)}).rows
    assert row.verdict.verdict == Outcome.REPRODUCED
