"""Each command's torch threads on the cores its process may use: one on one core, and on two the default
docs/speed.md states (one for the lessons' models; a split batch a shard a core), whatever the machine has."""
import os
import re
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from lm.model import threads
from tests.conftest import ROOT

# One run at toy size, fast to train and to read back.
TINY = ["train.steps=4", "eval.every=4", "eval.val_batches=1", "eval.val_batch_size=8", "eval.head_windows=4",
        "eval.final_windows=8", "sample.length=20", "runtime.progress=false", "measure=none"]
SHOWN = re.compile(r"torch threads: (\d+) \(([\w ]+); (\d+) cores\)")
MINE = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def command(args: list[str], store, cores: int, check: bool = True) -> tuple[subprocess.CompletedProcess, dict]:
    """`python args` on the first `cores` of this process's cores (its affinity set before it starts), its store
    the given folder; with the threads it said it computes on, by what said it."""
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "OMP_NUM_THREADS")}
    env.update(TINYGPT_STORE=str(store), TINYGPT_SHOW_THREADS="1", MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR="false")
    p = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                       preexec_fn=lambda: os.sched_setaffinity(0, MINE[:cores]))
    if check:
        assert p.returncode == 0, p.stderr[-3000:]
    shown = {}
    for n, what, seen in SHOWN.findall(p.stderr):
        assert int(seen) == cores, p.stderr[-2000:]    # the process counted the cores it may use
        shown.setdefault(what, set()).add(int(n))
    return p, shown


def runs(store) -> list:
    client = MlflowClient(f"sqlite:///{store}/mlflow.db")
    return client.search_runs([e.experiment_id for e in client.search_experiments()])


@pytest.mark.skipif(len(MINE) < 2, reason="needs two cores to tell one from two")
@pytest.mark.parametrize("cores", [1, 2])
def test_train_sample_heads_and_the_suites_workers_use_one_thread_on_one_core_and_the_default_on_two(tmp_path, cores):
    store = tmp_path / "store"
    _, shown = command(["-m", "lm.commands.train", *TINY, "tracking.experiment=one"], store, cores)
    assert shown == {"train": {1}}
    (run,) = runs(store)
    assert (run.data.tags["env.threads"], run.data.tags["runtime.threads"]) == ("1", "0")   # the run keeps what it used

    p, shown = command(["-m", "lm.commands.sample", f"run={run.info.run_id}", "length=10"], store, cores)
    assert shown == {"sample": {1}} and p.stdout.strip()

    p, shown = command(["-m", "lm.commands.heads", f"run={run.info.run_id}"], store, cores)
    assert shown == {"heads": {1}}
    assert "CPU, 1 thread)" in p.stdout

    # a sweep's runs go through the suite's workers: one thread each, one worker a core
    _, shown = command(["-m", "lm.commands.train", "-m", "model.n_head=1,2", *TINY], store, cores)
    assert shown == {"suite worker": {1}, "train": {1}}
    # the sweep's two runs, not its parent run, which trains nothing
    swept = [r for r in runs(store) if r.info.run_id != run.info.run_id and "env.threads" in r.data.tags]
    assert len(swept) == 2 and {r.data.tags["env.threads"] for r in swept} == {"1"}


@pytest.mark.skipif(len(MINE) < 2, reason="needs two cores to tell one from two")
def test_a_split_batch_takes_a_shard_a_core_and_runtime_threads_is_taken_as_asked(tmp_path):
    _, shown = command(["-m", "lm.commands.train", *TINY, "runtime.split_batch=true"], tmp_path, 2)
    assert shown == {"train": {2}}
    _, shown = command(["-m", "lm.commands.train", *TINY, "runtime.threads=3"], tmp_path, 1)
    assert shown == {"train": {3}}
    assert sorted(r.data.tags["env.threads"] for r in runs(tmp_path)) == ["2", "3"]


def test_the_automatic_count_is_one_for_every_exercises_models_and_the_cores_for_far_larger_ones(monkeypatch):
    from lm.model.model import train_flops
    from lm.settings import config

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    for overrides in ([], ["profile=cpu", "model.n_layer=6", "model.n_embd=128"], ["profile=microgpt"]):
        cfg = config.load(overrides)
        assert threads.automatic(train_flops(cfg.model, cfg.train.batch_size)) == 1, overrides
    cfg = config.load(["profile=gpu"])
    assert threads.automatic(train_flops(cfg.model, cfg.train.batch_size)) == 4


@pytest.mark.skipif(len(MINE) < 2, reason="needs two cores to tell one from two")
@pytest.mark.parametrize("cores", [1, 2])
def test_the_report_draws_on_a_worker_a_core_but_its_own_and_computes_nothing_with_torch(tmp_path, cores):
    code = ("import sys; from analysis.report import __main__; from analysis.report.painter import default_workers; "
            "print(default_workers(), 'torch' in sys.modules)")
    p, shown = command(["-c", code], tmp_path, cores)
    assert p.stdout.split() == [str(max(1, cores - 1)), "False"] and shown == {}
