"""A Ctrl-C that reaches the suite alone (`kill -INT <suite's pid>`, a supervisor's stop) stops its runs in progress
too: the suite passes it on, each run finishes its step and ends KILLED, and the suite exits 130 with its one line.
Before, the suite waited for them to train to the end (issue 26, item 8: a Ctrl-C lost)."""
from mlflow.tracking import MlflowClient

from tests.reliability import harness

ARGS = ["quick=true", "ablations=[small]", "workers=2", "train.steps=400", "eval.every=100"]
EXERCISE = """title: two small runs
lesson: "none: for the interrupt test"
measures: nothing
overrides: [model.n_embd=32, model.n_layer=1, model.block_size=32]
variants: {a: [], b: [train.lr=0.002]}
"""


def test_a_ctrl_c_to_the_suite_alone_stops_its_runs_at_their_next_step(tmp_path):
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "small.yaml").write_text(EXERCISE)
    store = tmp_path / "store"
    out = harness.run("lm.commands.suite", ARGS, store, fault="step:5:suiteint",
                      TINYGPT_EXPERIMENTS=tmp_path / "experiments")
    assert [f.split()[0] for f in out.fired] == ["step:5:suiteint"], out.fired
    assert out.rc == 130, out.err[-3000:]
    assert "interrupted: finished runs are kept" in out.err and "Traceback" not in out.err, out.err[-3000:]
    client = MlflowClient(harness.uri(store))
    runs = [r for r in client.search_runs([client.get_experiment_by_name("quick/small").experiment_id])
            if r.data.tags.get("role") != "exercise"]
    # The run that fired stopped long before its 400 steps; none trained to the end.
    assert runs and all(r.info.status == "KILLED" for r in runs), {r.info.run_name: r.info.status for r in runs}
    harness.record("suite_ctrl_c", runs=len(runs), runs_killed=len(runs), exit_status=out.rc)
    assert all(r.data.tags.get("failure_reason", "").startswith("stopped by SIGINT at step") for r in runs), \
        [r.data.tags.get("failure_reason") for r in runs]
