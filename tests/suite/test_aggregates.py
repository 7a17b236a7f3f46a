"""The parent run's per-variant metrics (lm/tracking/aggregates.py): mean, sample std and seed count of the headline metrics."""
from types import SimpleNamespace

import pytest

from lm.spec import exercises
from lm.tracking import aggregates


def run(variant, seed, val_loss, status="FINISHED", start=0):
    return SimpleNamespace(info=SimpleNamespace(status=status, start_time=start),
                           data=SimpleNamespace(tags={"variant": variant, "seed": str(seed)},
                                                metrics={"val_loss": val_loss}))


def test_two_seeds_give_a_mean_a_sample_std_and_a_count():
    out = aggregates.summarise([run("h4", 1, 2.0), run("h4", 2, 3.0), run("h1", 1, 2.5)], ["val_loss"])
    assert out["h4/val_loss_mean"] == 2.5 and out["h4/val_loss_std"] == pytest.approx(0.7071, abs=1e-4)
    assert out["h4/seeds"] == 2 and out["h1/seeds"] == 1 and "h1/val_loss_std" not in out


def test_an_unfinished_run_and_an_older_copy_of_a_seed_do_not_count():
    runs = [run("h4", 1, 9.0, start=1), run("h4", 1, 2.0, start=2), run("h4", 2, 7.0, status="FAILED")]
    assert aggregates.summarise(runs, ["val_loss"]) == {"h4/seeds": 1, "h4/val_loss_mean": 2.0}


def test_the_headline_metrics_are_the_losses_and_what_the_claims_read():
    ex = exercises.load_all()
    assert aggregates.headline(ex["heads"]) == ["val_loss", "val_perplexity"]
    assert {"n_params", "predicted_params", "predicted_score_array_size"} <= set(aggregates.headline(ex["scaling"]))
