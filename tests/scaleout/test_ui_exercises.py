"""Each exercise's MLflow view as a person sees it (issue 34): on the quick store of every exercise, `make ui`'s
server, and headless Chromium at 1600 × 1000 in a fresh profile. A click on an experiment in MLflow's home page
lands on its comparison, and so does each link `make ui` prints: the exercise's charts, in its YAML's order, on the
first screen, every legend showing every variant, no chart of a single bar (tests/scaleout/browser.py). Each
landing's first screen is kept in reports/screens/ui-<exercise>.png for people to look at."""
import pytest
from mlflow.tracking import MlflowClient

from lm.settings import exercises
from lm.tracking import views
from lm.tracking.store import duration
from tests.scaleout import browser
from tests.scaleout.helpers import Server

NAMES = [f"quick/{name}" for name in exercises.load_all()]


@pytest.fixture(scope="module")
def served(quick_store, tmp_path_factory):
    """`make ui` over the quick store, and each experiment's metrics, as its finished runs have them."""
    srv = Server(quick_store, tmp_path_factory.mktemp("ui-exercises") / "server.log")
    try:
        srv.wait()
        client = MlflowClient(f"sqlite:///{quick_store / 'mlflow.db'}")
        logged = {}
        for name in NAMES:
            exp = client.get_experiment_by_name(name)
            runs = client.search_runs([exp.experiment_id], "attributes.status = 'FINISHED'")
            logged[name] = {k for r in runs if r.data.tags.get("variant") for k in r.data.metrics}
        yield srv, logged
    finally:
        srv.stop()


# What an exercise's own view shows beyond its YAML's charts in their order (issue 34's list), every card looked at.
STORY = {
    "quick/context": lambda seen: seen.charts[0] == "val_loss_at_position"
    and seen.cards[0].groups == {"ctx16", "ctx64", "ctx128"},
    "quick/baseline": lambda seen: seen.charts[0] == "val_loss vs lesson_val_loss",
    # the validation curves, then the knock-out costs
    "quick/heads": lambda seen: seen.charts[:3] == ["val_loss", "val_loss", "knockout_head_max"]
    and all(f"Group: {v}" in seen.text for v in ("h1", "h2", "h4", "h8")),
    "quick/scaling": lambda seen: "n_params vs. val_loss" in seen.charts,
}


@pytest.mark.parametrize("name", NAMES)
def test_a_click_on_the_exercise_in_mlflows_home_lands_on_its_comparison(served, name):
    srv, logged = served
    own = browser.printed_links(srv.log.read_text())[name][1]   # after its table's link
    seen = browser.check_landing(srv.url, name, logged[name], printed=own)
    assert STORY.get(name, lambda _: True)(seen), (seen.charts, [c.groups for c in seen.cards[:1]])


def test_each_link_make_ui_prints_opens_on_the_exercises_comparison(served):
    """Each exercise's own charts view is its landing's very address (the test above), looked at there card by card;
    here its table and the variants it charts apart."""
    srv, logged = served
    seen = browser.check_printed_links(srv.log.read_text(), NAMES, logged, screens=True, own=False)
    probes = seen["quick/sqrtd"][1]   # its one-step probes, in a view of their own
    assert probes.cards[0].groups == {"scaled_d64", "unscaled_d64", "unscaled_d128"}


def test_the_bare_address_and_the_sidebars_home_open_the_experiments_list(served):
    browser.check_home(served[0].url, NAMES)


def test_a_copy_carries_the_duration_of_the_run_it_copies_and_a_parent_lasts_as_long_as_its_runs(quick_store):
    """The table's Duration column: a copied run (lesson 002's base model, in heads and nopos002) says so and gives
    its source's Duration beside its own; an exercise's parent run starts with its first run and ends with its last."""
    client = MlflowClient(f"sqlite:///{quick_store / 'mlflow.db'}")
    ids = [client.get_experiment_by_name(name).experiment_id for name in NAMES]
    copies = client.search_runs(ids, f"tags.{views.COPIED_FROM} LIKE '%'")
    assert copies
    for copy in copies:
        source = client.get_run(copy.data.tags[views.COPIED_FROM])
        assert copy.data.tags[views.SOURCE_DURATION] == duration(source.info.end_time - source.info.start_time)
    for name in ("quick/heads", "quick/context"):
        runs = client.search_runs([client.get_experiment_by_name(name).experiment_id])
        parent = next(r for r in runs if r.data.tags.get("role") == "exercise")
        children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
        assert parent.info.start_time <= min(r.info.start_time for r in children), name
        assert parent.info.end_time == max(r.info.end_time for r in children), name
