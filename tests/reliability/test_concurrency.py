"""Two suites started at once on one SQLite store, as from two terminals: neither errors, one waits for the other,
and no run is trained twice."""
from tests.reliability import harness


def test_neither_errors_and_one_waits(clean_store):
    _, outcomes, _ = clean_store
    for o in outcomes:
        assert o.rc == 0 and "Traceback" not in o.err, o.err[-3000:]
    waited = [o for o in outcomes if "another suite is using this store; waiting" in o.err]
    trained = [o for o in outcomes if "0 already done, 6 to run" in o.out]
    harness.record("concurrency", suites=len(outcomes), waited=len(waited), trained=len(trained))
    assert len(waited) == 1 and len(trained) == 1 and waited != trained, [o.out for o in outcomes]
    assert "6 already done, 0 to run" in waited[0].out and "nothing to run" in waited[0].out


def test_no_run_is_trained_twice(clean_store):
    _, _, audit = clean_store
    harness.record("concurrency", runs_finished=audit.finished, runs_lost=len(audit.lost),
                   duplicate_runs=len(audit.duplicate_runs), points_logged_twice=len(audit.duplicate_points))
    assert not audit.problems, audit.problems
    assert audit.runs == 6 + 3  # six runs and the parents of its three exercises
