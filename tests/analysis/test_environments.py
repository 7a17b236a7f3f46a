"""The environment travels with each run (env.* tags), and the report flags a comparison whose runs differ in it."""
import hashlib
import platform
from pathlib import Path

import torch

from analysis import report
from lm.tracking.environment import COMPARED
from tests.analysis.test_report import make

ROOT = Path(__file__).resolve().parents[2]


def runs_of(client, experiment):
    exp = client.get_experiment_by_name(experiment)
    return [r for r in client.search_runs([exp.experiment_id]) if r.data.tags.get("variant")]


def test_every_run_carries_its_software_machine_threads_and_git_state(store_copy):
    _, client = store_copy
    for run in runs_of(client, "quick/heads"):
        tags = run.data.tags
        assert set(COMPARED) <= set(tags)
        assert tags["env.python"] == platform.python_version() and tags["env.torch"] == torch.__version__
        assert tags["env.threads"] == "1"                  # the suite's workers run one thread each
        assert tags["env.git_commit"] == tags["mlflow.source.git.commit"].removesuffix("-dirty")
        assert tags["env.git_dirty"] in ("true", "false") and tags["env.device"]
        assert tags["corpus"] == "shakespeare" and tags["corpus.sha256"].startswith("86c4e6aa")


def test_the_report_shows_the_environments_and_flags_a_comparison_that_mixes_them(store_copy, tmp_path):
    folder, client = store_copy
    rc, _, _ = make(folder, tmp_path / "same", "quick=true", "ablations=[heads,nopos]", "log=false")
    md = (tmp_path / "same" / "report.md").read_text()
    assert rc == 0 and "| python | torch | lightning | mlflow | numpy | lock | device | threads | git_commit | corpus |" in md
    assert "Within each exercise every run ran in the same environment, on the same corpus." in md
    h1 = next(r for r in runs_of(client, "quick/heads") if r.data.tags["variant"] == "h1")
    client.set_tag(h1.info.run_id, "env.torch", "2.0.0")
    rc, _, _ = make(folder, tmp_path / "mixed", "quick=true", "ablations=[heads,nopos]", "log=false")
    md = (tmp_path / "mixed" / "report.md").read_text()
    assert rc == 0 and f"- ⚠ heads: its runs differ in torch (2.0.0, {torch.__version__}), so their comparison " \
                       f"mixes environments" in md
    assert "⚠ nopos" not in md


def test_every_run_carries_its_lock_files_hash_and_the_report_flags_runs_from_different_locks(store_copy, tmp_path):
    folder, client = store_copy
    lock = hashlib.sha256((ROOT / "requirements.lock").read_bytes()).hexdigest()[:12]
    runs = runs_of(client, "quick/heads")
    assert {r.data.tags["env.lock"] for r in runs} == {lock}
    client.set_tag(runs[0].info.run_id, "env.lock", "0123456789ab")   # installed from another lock file
    rc, _, _ = make(folder, tmp_path / "mixed", "quick=true", "ablations=[heads,nopos]", "log=false")
    md = (tmp_path / "mixed" / "report.md").read_text()
    assert rc == 0 and f"- ⚠ heads: its runs differ in lock ({', '.join(sorted([lock, '0123456789ab']))}), so " \
                       f"their comparison mixes environments" in md
