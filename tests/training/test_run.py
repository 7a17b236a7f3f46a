"""A real run, end to end, into a temporary MLflow store, read back through MLflow's own client."""
import json
import os
import re
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from analysis.store_reading.reader import Reader
from lm.commands import heads, train
from lm.model import checkpoint
from lm.model.model import GPTConfig
from lm.tracking.store import pointed_at

TINY = ["train.steps=30", "eval.every=10", "eval.val_batches=2", "eval.val_batch_size=16", "eval.head_windows=8",
        "sample.length=50", "runtime.progress=false", "tracking.experiment=tiny"]


def trained(store, args: list[str]) -> tuple[str, pd.DataFrame]:
    """`make train` with args into a store of its own: the store's URI and its experiment's runs."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TINYGPT_STORE", str(store))
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        assert train.main(args) == 0
    uri = f"sqlite:///{store}/mlflow.db"
    with pointed_at(uri):
        return uri, mlflow.search_runs(experiment_names=["tiny"])


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    return trained(tmp_path_factory.mktemp("store"), TINY)


def test_the_run_is_in_mlflow_with_its_whole_config(finished):
    _, runs = finished
    assert len(runs) == 1 and runs.loc[0, "status"] == "FINISHED"
    row = runs.loc[0]
    assert row["params.model.n_head"] == "4" and row["params.n_head"] == "4" and row["params.train.lr"] == "0.003"
    assert row["params.data.corpus"] == "shakespeare" and row["tags.config_hash"] == row["params.config_hash"]
    for key in ("val_loss", "val_perplexity", "n_params", "tokens_per_s", "uniform_loss", "bigram_loss",
                "word_validity", "heads_prev_token_max"):
        assert row[f"metrics.{key}"] == row[f"metrics.{key}"], key   # present, not NaN
    assert row["metrics.n_params"] == 112_193
    assert row["metrics.bigram_loss"] == pytest.approx(2.4819, abs=1e-4)
    assert row["metrics.val_perplexity"] == pytest.approx(2.718281828 ** row["metrics.val_loss"], rel=1e-6)


def test_the_run_logs_the_measurements_the_lessons_claims_read(finished):
    _, runs = finished
    row = runs.loc[0]
    m = {k[len("metrics."):]: v for k, v in row.items() if k.startswith("metrics.") and pd.notna(v)}
    assert m["score_array_size"] == 0                  # the fused kernel trains without holding the array
    assert m["predicted_score_array_size"] == 524_288  # 32 windows × 4 heads × 64 × 64
    assert 0 < m["shuffle_change"] and m["train_eval_loss"] > 0 and 0 <= m["short_word_validity"] <= 1
    assert 0 <= m["init_score_gap8_share"] < 0.01 and 0 <= m["init_onehot_share"] < 0.01   # scaled: spread 1
    letters = {k[len("probe_p_"):]: v for k, v in m.items() if k.startswith("probe_p_")}
    assert set(letters) == set("abcdefghijklmnopqrstuvwxyz") and 0 < sum(letters.values()) < 1
    assert all(0 < p <= m["probe_top1_p"] for p in letters.values())
    assert not any(k.startswith("heatmap_last_") for k in m)   # lesson 000's heatmap line asks no such question


def test_the_final_validation_scores_every_window_of_the_held_out_text_and_keeps_each_windows_loss(finished, tmp_path):
    """Issue 32, item 5: the final val_loss is over every window of the held-out tenth (1,743 of 64 characters), not
    the fixed sample the curve reads; each window's loss is an artifact, in order, for pairing runs window by window."""
    import numpy as np

    from lm.model.data import held_out_windows, load_corpus
    from lm.settings import config

    uri, runs = finished
    row = runs.loc[0]
    corpus = load_corpus(config.load([]).data)
    path = MlflowClient(uri).download_artifacts(row["run_id"], "val_window_losses.npy", str(tmp_path))
    losses = np.load(path)
    assert len(losses) == sum(len(x) for x, _ in held_out_windows(corpus, 64)) == 1743
    sizes = np.array([64] * 1742 + [(len(corpus.val) - 1) % 64])          # the last window is shorter
    assert row["metrics.val_loss"] == pytest.approx((losses * sizes).sum() / sizes.sum(), rel=1e-5)
    assert row["metrics.val_loss_se"] == pytest.approx(losses.std(ddof=1) / np.sqrt(len(losses)), rel=1e-4)


def test_the_run_logs_lesson_002s_untrained_loss_and_the_models_code_checks_at_step_0(finished):
    """loss_at_init: one training batch, the run's first, of the model as it started (rebuilt from the seed);
    attention_gradcheck and the worked blend: the model's code checked as lessons 000 and 001 check theirs."""
    from lm.measures import probes
    from lm.model.data import load_corpus, train_batch
    from lm.settings import config

    uri, runs = finished
    client = MlflowClient(uri)
    def at_0(key):
        return [m.value for m in client.get_metric_history(runs.loc[0, "run_id"], key) if m.step == 0]

    cfg = config.load(TINY)
    start = probes.untrained(cfg.model, cfg.seed)
    assert at_0("loss_at_init") == [pytest.approx(probes.batch_loss(
        start.train(), train_batch(load_corpus(cfg.data), 32, 64, cfg.seed, 0)), rel=1e-6)]
    assert at_0("attention_gradcheck")[0] < 1e-8 and at_0("worked_blend_1") == [pytest.approx(7.18, abs=0.005)]
    assert 0 < runs.loc[0, "metrics.heads_attention_change"] < 1


def test_curves_are_logged_per_step(finished):
    uri, runs = finished
    client = MlflowClient(uri)
    run_id = runs.loc[0, "run_id"]
    train_loss = client.get_metric_history(run_id, "train_loss")
    assert sorted(m.step for m in train_loss) == list(range(1, 31))
    val = sorted((m.step, m.value) for m in client.get_metric_history(run_id, "val_loss"))
    assert [s for s, _ in val] == [0, 10, 20, 30]
    assert val[-1][1] < val[0][1]                      # it learned something
    times = sorted((m.step, m.value) for m in client.get_metric_history(run_id, "train_time_s"))
    assert [s for s, _ in times] == [10, 20, 30] and 0 < times[0][1] < times[1][1] < times[2][1]


def test_the_fixed_sample_is_validated_every_eval_every_steps_but_the_last_steps_validation_is_every_window(
        tmp_path, monkeypatch):
    from lm.run.module import LitGPT

    at = []
    validation_step = LitGPT.validation_step

    def counted(self, batch, batch_idx):
        at.append(self.global_step)
        return validation_step(self, batch, batch_idx)

    monkeypatch.setattr(LitGPT, "validation_step", counted)
    uri, runs = trained(tmp_path / "store", TINY)
    # two batches each after steps 10 and 20; after step 30 the run's final validation reads every window instead
    assert at == [10, 10, 20, 20]
    assert runs.loc[0, "metrics.val_loss"] == MlflowClient(uri).get_metric_history(runs.loc[0, "run_id"], "val_loss")[-1].value


def test_the_checkpoint_loads_back_safely(finished, tmp_path):
    uri, runs = finished
    run_id = runs.loc[0, "run_id"]
    names = {a.path for a in MlflowClient(uri).list_artifacts(run_id)}
    assert {"model.pt", "samples.txt", "heads.csv", "attention.json", "probe.json"} <= names
    path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="model.pt", dst_path=str(tmp_path),
                                               tracking_uri=uri)
    model, meta = checkpoint.load(path, expect=GPTConfig())
    assert len(meta["chars"]) == 65
    with pytest.raises(checkpoint.CheckpointError, match="different config: model.n_head=8"):
        checkpoint.load(path, expect=GPTConfig(n_head=8))



def test_summary_lines(store, capsys):
    assert train.main([*TINY, "train.steps=10", "eval.every=10"]) == 0
    out = capsys.readouterr().out
    assert "after 'To be, or not to b':" in out and "validation loss" in out


def test_a_run_and_a_read_leave_the_process_s_store_as_they_found_it(store, monkeypatch):
    from mlflow.tracking._tracking_service import utils

    monkeypatch.setattr(utils, "_tracking_uri", None)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "unset below, put back after the test")
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    assert train.main([*TINY, "train.steps=10", "eval.every=10"]) == 0   # Lightning's logger sets both
    assert utils._tracking_uri is None and "MLFLOW_TRACKING_URI" not in os.environ
    # A URI an earlier command set as MLflow's global, but not in the environment: reading another store must not
    # bring it back into the environment, where every later command of the process would take it for its store.
    mlflow.set_tracking_uri("sqlite:///elsewhere.db")
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    assert len(Reader(f"sqlite:///{store}/mlflow.db").runs("tiny")) == 1
    assert utils._tracking_uri == "sqlite:///elsewhere.db" and "MLFLOW_TRACKING_URI" not in os.environ


def test_the_run_logs_every_heads_knock_out_and_the_attention_view_lines(finished, tmp_path):
    uri, runs = finished
    row = runs.loc[0]
    keys = [f"knockout_{z}b{b}{p}" for z in ("", "zero_") for b in (1, 2)
            for p in ("h1", "h2", "h3", "h4", "_attn", "_mlp")]
    for key in [*keys, "knockout_prev_head_b1", "knockout_other_b1_max", "knockout_sharpest_head",
                "knockout_head_max", "knockout_seconds"]:
        assert row[f"metrics.{key}"] == row[f"metrics.{key}"], key   # present, not NaN
    client = MlflowClient(uri)
    table = pd.read_csv(client.download_artifacts(row["run_id"], "knockout.csv", str(tmp_path)))
    assert sorted(table["metric"]) == sorted(keys)
    for r in table.itertuples():
        assert row[f"metrics.{r.metric}"] == pytest.approx(r.increase)
    lines = json.loads(Path(client.download_artifacts(row["run_id"], "attention_lines.json", str(tmp_path)))
                       .read_text())["lines"]
    assert [x["name"] for x in lines] == ["heatmap line", "validation 1", "validation 2", "validation 3",
                                          "induction test"]
    assert "".join(lines[0]["chars"]) == "What is the time o' the day?"
    rep = "".join(lines[-1]["chars"])
    assert rep[:20] == rep[20:]                          # the induction test: a random string, repeated
    w = lines[0]["weights"]
    assert len(w) == 2 and len(w[0]) == 4 and [len(r) for r in w[0][0]] == list(range(1, 29))   # to the diagonal
    assert all(abs(sum(r) - 1) < 1e-3 for r in w[1][3])


def test_make_heads_prints_the_head_table_of_a_finished_run(finished, capsys):
    uri, runs = finished
    assert heads.main([f"run={runs.loc[0, 'run_id']}", "force=true", f"tracking_uri={uri}"]) == 0
    out = capsys.readouterr().out
    assert "validation loss" in out and "knock-out (mean)" in out and "type" in out
    lines = out.splitlines()
    rows = [ln.split() for ln in lines[2:-1]]
    assert len(rows) == 2 * 4 + 4 and sum(r[1] in ("(attn)", "(mlp)") for r in rows) == 4
    assert re.fullmatch(r"24 knock-outs in [\d.]+ s \([\d.]+ s of CPU, \d+ threads?\)", lines[-1])
    assert heads.main(["run=nosuchrun", f"tracking_uri={uri}"]) == 2
    assert "no such run" in capsys.readouterr().err
