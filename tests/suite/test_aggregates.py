"""The parent run's per-variant tags (lm/tracking/aggregates.py): mean, sample std and seed count of the headline
metrics."""
from types import SimpleNamespace

import numpy as np
import pytest

from lm.settings import exercises
from lm.tracking import aggregates


def run(variant, seed, val_loss, status="FINISHED", start=0):
    return SimpleNamespace(info=SimpleNamespace(status=status, start_time=start),
                           data=SimpleNamespace(tags={"variant": variant, "seed": str(seed)},
                                                metrics={"val_loss": val_loss}))


def test_two_seeds_give_a_mean_a_sample_std_and_a_count_one_seed_the_mean_alone():
    out = aggregates.summarise([run("h4", 1, 2.0), run("h4", 2, 3.0), run("h1", 1, 2.5)], ["val_loss"])
    assert out == {"h4/val_loss": "2.5 ± 0.71 (2 seeds)", "h1/val_loss": "2.5 (1 seed)"}


def test_a_mean_is_numbers_with_its_seed_count_apart_and_reads_as_the_tag():
    m = aggregates.Mean.of(np.array([2.0, 3.0]))
    assert (m.mean, m.seeds) == (2.5, 2) and m.std == pytest.approx(0.7071, abs=1e-4)
    assert str(m) == "2.5 ± 0.71 (2 seeds)"
    one, counts = aggregates.Mean.of(np.array([2.5])), aggregates.Mean.of(np.array([4192.0, 4192.0, 4192.0]))
    assert (one.mean, one.std, one.seeds) == (2.5, None, 1) and (counts.std, counts.seeds) == (None, 3)


def test_an_unfinished_run_and_an_older_copy_of_a_seed_do_not_count():
    runs = [run("h4", 1, 9.0, start=1), run("h4", 1, 2.0, start=2), run("h4", 2, 7.0, status="FAILED")]
    assert aggregates.summarise(runs, ["val_loss"]) == {"h4/val_loss": "2 (1 seed)"}


def test_a_count_reads_in_full_and_a_loss_in_four_digits():
    assert aggregates.number(103456.0) == "103,456" and aggregates.number(1.52349) == "1.523"
    assert aggregates.number(112193.0) == "112,193" and aggregates.number(4192.0) == "4,192"   # not 112193.00


def test_a_count_every_seed_gives_alike_is_an_integer_with_no_spread():
    out = aggregates.summarise([SimpleNamespace(info=r.info, data=SimpleNamespace(tags=r.data.tags,
                                                                                   metrics={"n_params": 112193.0}))
                                for r in (run("base", 1, 0), run("base", 2, 0), run("base", 3, 0))], ["n_params"])
    assert out == {"base/n_params": "112,193 (3 seeds)"}


def test_the_headline_metrics_are_the_losses_what_the_claims_read_and_what_the_ui_charts():
    ex = exercises.load_all()
    assert aggregates.headline(ex["heads"]) == ["val_loss", "val_perplexity",   # then its ui: block's final values
                                                "knockout_head_max", "knockout_b1_attn", "knockout_b2_attn"]
    assert {"n_params", "params_tok", "predicted_score_array_size"} <= set(aggregates.headline(ex["scaling"]))
    assert "word_validity" in aggregates.headline(ex["temperature"])
