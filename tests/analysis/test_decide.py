"""`make decide` (analysis/decide.py): seeds added in rounds to exactly the variants the open claims read, within
its budget, through the suite; the table then reads those claims at their new look."""
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from analysis import decide
from analysis import runs as notebook
from analysis.verdicts import decision
from lm.settings.errors import ConfigError
from tests.conftest import ROOT


def child_runs(client: MlflowClient) -> dict[str, set[tuple[str, int]]]:
    """Each experiment's (variant, seed) pairs of its child runs."""
    found = {}
    for e in client.search_experiments():
        runs = client.search_runs([e.experiment_id])
        found[e.name] = {(r.data.tags["variant"], int(r.data.tags["seed"])) for r in runs if "variant" in r.data.tags}
    return found


def test_a_budget_is_runs_or_cpu_minutes_and_anything_else_is_one_line():
    assert decide.Budget.parse("30") == decide.Budget(30, minutes=False)
    assert decide.Budget.parse("60min") == decide.Budget(60, minutes=True)
    for bad in ("lots", "0", "-3", "5 hours"):
        with pytest.raises(ConfigError, match="give a number of runs"):
            decide.Budget.parse(bad)
    for argv in ([], ["budget=lots"], ["budget=3", "nonsense=1"]):
        p = subprocess.run([sys.executable, "-m", "analysis.decide", *argv], cwd=ROOT, capture_output=True, text=True)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and p.stderr.startswith("error:"), p.stderr


def test_decide_adds_a_round_to_exactly_the_variants_its_open_claims_read_within_the_budget(store_copy, monkeypatch):
    folder, client = store_copy
    uri = f"sqlite:///{folder}/mlflow.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    before = child_runs(client)
    base = ["quick=true", "ablations=context"]
    assert decide.main([*base, "budget=4", "plan=true"]) == 0
    assert child_runs(client) == before                                    # a plan trains nothing
    table = notebook.verdicts(quick=True, ablations="context", tracking_uri=uri)
    assert table["verdict"].str.startswith("indicative").any()
    assert decide.main([*base, "budget=4"]) == 0
    after = child_runs(client)
    added = {name: after[name] - before.get(name, set()) for name in after if after[name] != before.get(name, set())}
    # ctx64 and ctx128, the variants the context claims read, to the first look; nothing else, within 4 runs.
    assert added == {"quick/context": {("ctx64", 2), ("ctx64", 3), ("ctx128", 2), ("ctx128", 3)}}, added
    table = notebook.verdicts(quick=True, ablations="context", tracking_uri=uri)
    claims = table[~table["verdict"].str.startswith("finding")]        # the two the lesson makes
    assert len(claims) == 2 and (claims["seeds"] == str(decision.LOOKS[0])).all(), claims[["claim", "seeds"]]
    assert not claims["verdict"].str.startswith("indicative").any()
