"""`make gpu-check` on a machine without a GPU: the README's CPU command runs every step at toy size, and writes one
Markdown table and its artifacts to $OUT; asking for CUDA where there is none, or for an unknown option, is one
line. (On a lent GPU the same script runs at full size: see the README's GPU section.)"""
import json
import os
import subprocess
import sys

import pytest
import torch

from lm.tools import gpucheck
from tests.scaleout.helpers import ROOT


def make_gpu_check(args: str, out) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"} | {"OUT": str(out)}
    return subprocess.run(["make", "-s", "-o", ".venv/.installed", f"PY={sys.executable}", "gpu-check", f"ARGS={args}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here: run `make gpu-check` itself")
def test_make_gpu_check_on_the_cpu_runs_every_step_at_toy_size_into_one_table(tmp_path):
    p = make_gpu_check("quick=true runtime.accelerator=cpu", tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    table = (tmp_path / "gpu-check.md").read_text()
    rows = [line.split(" | ")[0].strip("| ") for line in table.splitlines()[2:]]
    # the checks that the harness works there before the timings, whatever the order `only` names them in
    assert rows == ["env"] * 3 + ["numerics"] + ["suite"] * 3 + ["gpu"] * 3 + ["large"] * 3 + ["all"], table
    assert "FAILED" not in table and table in p.stdout
    figures = json.loads((tmp_path / "gpu-check.json").read_text())
    # on the CPU the runs compute in fp32, so MFU is against the fp32 rate, whatever the CPU's bf16 rate
    assert "float32 matmul rate, measured" in table
    assert figures["matmul_flops"] > 0 and 0 < figures["gpu"]["mfu"] < 1
    assert figures["gpu"]["steps_done"] == 15 and figures["gpu"]["peak_mb"] > 0
    large = figures["large"]  # stopped at its deadline, far short of 5,000 steps, validated from step 0 to there
    assert 0 < large["steps_done"] < 5000
    assert large["val_curve"][0][0] == 0 and large["val_curve"][-1][0] == large["steps_done"]
    assert (large["best_step"], large["best_val_loss"]) in map(tuple, large["val_curve"])
    assert figures["suite_runs"] == 1 and (tmp_path / "report" / "report.md").is_file()
    # the same seed on the same device: the numerics check's two runs are one run twice
    assert figures["numerics"]["gap"] == 0 and figures["numerics"]["agree"]
    assert (tmp_path / "nvidia-smi.txt").is_file()


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_asking_for_cuda_without_a_gpu_is_one_line(tmp_path, capsys):
    assert gpucheck.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: runtime.accelerator=cuda, but this machine has no CUDA GPU") and err.count("\n") == 1


@pytest.mark.parametrize("args, message", [
    (["only=env,nosuch"], "only='env,nosuch': 'nosuch' is not one of env, numerics, suite, gpu, large"),
    (["quik"], "unknown option 'quik': did you mean quick=true?"),
    (["runtime.accelerator=tpu"], "runtime.accelerator='tpu': 'tpu' is not one of cuda, cpu"),
])
def test_an_unknown_option_or_value_is_one_line(args, message, capsys):
    assert gpucheck.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1
