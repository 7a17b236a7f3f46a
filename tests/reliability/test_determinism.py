"""The same config and seed on the same machine give the same numbers: across runs, across worker counts, and
whether or not the run was killed and resumed on the way."""
from tests.reliability import harness


def test_same_seed_same_numbers_killed_or_not_one_worker_or_two(kill_loop, clean_store):
    """The kill loop trained with 2 workers, then 1, and was killed five times; the clean store with 2 workers."""
    _, _, killed = kill_loop
    _, _, clean = clean_store
    assert killed.val_loss.keys() == clean.val_loss.keys() and killed.val_loss
    spread, compared = 0.0, 0
    for key in clean.val_loss:
        spread = max(spread, abs(killed.val_loss[key] - clean.val_loss[key]))
        for metric in ("val_loss", "train_loss"):
            a, b = killed.curves[key].get(metric, []), clean.curves[key].get(metric, [])
            assert [s for s, _ in a] == [s for s, _ in b], (key, metric)
            spread = max([spread, *(abs(x - y) for (_, x), (_, y) in zip(a, b))])
            compared += len(a)
    harness.record("determinism", val_loss_spread=spread, points_compared=compared, runs_compared=len(clean.val_loss))
    assert spread <= 1e-6
