"""A password in a tracking URI is shown as *** wherever the URI is shown (store_check.redact); the team server's
tests (tests/server) scan a real suite's output, store and SLURM logs for it."""
import pytest

from lm.settings import config
from lm.tracking import store_check


@pytest.mark.parametrize("text, shown", [
    ("postgresql+psycopg2://tinygpt:s3cret@127.0.0.1:5433/tinygpt",
     "postgresql+psycopg2://tinygpt:***@127.0.0.1:5433/tinygpt"),
    ("http://tester:p%40ss:word@127.0.0.1:5055", "http://tester:***@127.0.0.1:5055"),
    ("72 runs in 10 exercises (https://me:pw@mlflow.example.org/): 0 already done",
     "72 runs in 10 exercises (https://me:***@mlflow.example.org/): 0 already done"),
    ("mysql://a:1@h/db and postgresql://b:2@h/db", "mysql://a:***@h/db and postgresql://b:***@h/db"),
    ("http://tester@127.0.0.1:5055", "http://tester@127.0.0.1:5055"),          # no password: as it is
    ("sqlite:////home/me/mlruns/mlflow.db", "sqlite:////home/me/mlruns/mlflow.db"),
    ("http://127.0.0.1:5000/#/experiments/1", "http://127.0.0.1:5000/#/experiments/1"),
    ("time: 12:30 @ home", "time: 12:30 @ home"),
])
def test_a_password_in_a_uri_is_shown_as_stars_and_nothing_else_changes(text, shown):
    assert store_check.redact(text) == shown


def test_the_login_in_a_servers_uri_is_taken_out_of_the_url_and_sent_as_basic_auth():
    url, headers, who = store_check.login("http://tester:p%40ss@127.0.0.1:5055/")
    assert url == "http://127.0.0.1:5055" and who == "the URI (user tester)"
    assert headers == {"Authorization": "Basic dGVzdGVyOnBAc3M="}            # tester:p@ss


def test_a_runs_params_hold_its_tracking_uri_without_the_password():
    from lm.run import train

    cfg = config.load(["tracking.uri=postgresql+psycopg2://tinygpt:s3cret@127.0.0.1:5433/tinygpt"])
    assert train.params(cfg)["tracking.uri"] == "postgresql+psycopg2://tinygpt:***@127.0.0.1:5433/tinygpt"
