"""Every command the README shows runs in a test: each command line of its shell blocks is in COMMANDS, with the
tests that run it, and each of those tests exists (collected through `make test`, the README's own command)."""
import re
import subprocess
from pathlib import Path

from tests.conftest import MAKE, user_env

ROOT = Path(__file__).resolve().parents[2]
THIS = "tests/config/test_readme.py"

# The README's command lines, as shown (comments left out), and the tests that run them: the command itself, or its
# main with the same options at toy size (quick=true, a few steps), and, where make is between, make's argv too.
COMMANDS = {
    "make ablations": (
        "tests/reliability/test_make_text.py::test_a_count_of_seeds_and_a_list_of_exercises_arrive",
        "tests/suite/test_suite.py::test_one_experiment_per_exercise_with_a_parent_and_nested_children"),
    "make test": (f"{THIS}::test_every_test_the_table_names_is_collected_by_make_test",),
    "make train": (
        "tests/config/test_fast_feedback.py::test_make_train_cfg_prints_the_resolved_config",
        "tests/training/test_run.py::test_the_run_is_in_mlflow_with_its_whole_config"),
    'make train ARGS="--cfg"': (
        "tests/config/test_fast_feedback.py::test_make_train_cfg_prints_the_resolved_config",
        "tests/config/test_fast_feedback.py::test_a_command_answers_before_its_heavy_imports[train --cfg]"),
    'make sample RUN=<run id> PROMPT="ROMEO:" ARGS="length=200"': (
        "tests/reliability/test_make_text.py::test_args_words_group_with_quotes_and_keep_their_backslashes",
        "tests/reliability/test_make_text.py::test_make_sample_starts_from_the_prompt_as_typed_with_its_escapes",
        "tests/data/test_own_corpus.py::test_the_samples_speak_the_text_s_characters"),
    'make train ARGS="model.n_embd=65"': (
        "tests/reliability/test_bad_input.py::test_bad_input_is_refused_clearly_before_any_work"
        "[n_embd=65 with n_head=4]",
        "tests/config/test_bad_input.py::test_bad_input_is_one_line_and_touches_nothing[heads do not divide the width]"),
    "make ablations ABLATIONS=nomask,heads SEEDS=1": (
        "tests/reliability/test_make_text.py::test_a_count_of_seeds_and_a_list_of_exercises_arrive",
        "tests/suite/test_suite.py::test_one_experiment_per_exercise_with_a_parent_and_nested_children"),
    "make decide BUDGET=60min": (
        "tests/reliability/test_make_text.py::test_make_decide_passes_its_budget_and_args",
        "tests/analysis/test_decide.py::test_decide_adds_a_round_to_exactly_the_variants_its_open_claims_read_within_the_budget"),
    'make decide BUDGET=6 ARGS="quick=true plan=true"': (
        "tests/reliability/test_make_text.py::test_make_decide_passes_its_budget_and_args",
        "tests/analysis/test_decide.py::test_decide_adds_a_round_to_exactly_the_variants_its_open_claims_read_within_the_budget"),
    'make ablations ARGS="plan=true"': (
        "tests/config/test_plan.py::test_plan_true_on_a_new_store_lists_the_runs_says_its_figures_are_defaults_and_"
        "creates_nothing",
        "tests/config/test_plan.py::test_the_plan_estimates_the_suite_that_ran_within_a_quarter_of_its_time_and_"
        "counts_what_is_done"),
    "make help": ("tests/config/test_help.py::test_make_help_lists_every_target_with_its_comment",),
    "make ablations-quick": ("tests/analysis/test_runs.py::test_the_notebook_example_of_the_docs_runs_as_shown",),
    "make ablations ABLATIONS=wider SEEDS=3": (
        "tests/analysis/test_own_exercise.py::test_a_new_exercise_file_gets_its_section_with_figures_and_a_verdict",),
    "TINYGPT_EXPERIMENTS=~/my-exercises make ablations ABLATIONS=wider": (
        "tests/analysis/test_own_exercise.py::test_a_new_exercise_file_gets_its_section_with_figures_and_a_verdict",),
    "make report": (
        "tests/analysis/test_own_exercise.py::test_a_new_exercise_file_gets_its_section_with_figures_and_a_verdict",
        "tests/analysis/test_report.py::test_every_section_and_figure"),
    'make sweep ARGS="model.n_head=1,2,4,8 model.n_layer=2,4" SEEDS=3': (
        "tests/suite/test_sweep.py::test_make_sweep_passes_seeds_and_the_grid_to_python_m_lm_train",
        "tests/suite/test_sweep.py::test_a_sweep_trains_its_grid_into_mlflow_once"),
    "make ui": (
        "tests/scaleout/test_ui_cli.py::test_it_binds_loopback_and_serves_the_artifacts",
        "tests/scaleout/test_ui_runs.py::test_make_ui_prints_each_exercises_runs_link"),
    "make ui PORT=5001": ("tests/scaleout/test_ui_cli.py::test_make_ui_passes_host_and_port",),
    'make report ARGS="quick=true"': ("tests/analysis/test_report.py::test_every_section_and_figure",),
    'make report ARGS="docs=docs"': ("tests/analysis/test_report.py::test_the_docs_pages_are_the_reports_table",),
    "make calibrate": (
        "tests/analysis/test_calibration.py::test_make_calibrate_answers_a_mistake_in_one_line_and_prints_the_rates",),
    'make test ARGS="tests/model"': (f"{THIS}::test_every_test_the_table_names_is_collected_by_make_test",),
    'make export ARGS="quick=true"': (
        "tests/analysis/test_runs.py::test_make_export_writes_parquet_and_csv",
        "tests/analysis/test_paper_exports.py::test_make_export_writes_the_verdict_table_and_the_means_as_csv_and_latex"),
    "make compare A=mlruns B=../other/mlruns": (
        "tests/analysis/test_compare.py::test_compare_names_exactly_the_claims_that_read_the_changed_variant",),
    "MLFLOW_TRACKING_URI=http://mlflow.internal:5000 make ablations": (
        "tests/scaleout/test_mlflow_server.py::test_the_suite_logs_runs_metrics_and_artifacts_to_the_server",),
    'make ablations ARGS="launcher=slurm"': (
        "tests/slurm/test_slurm.py::test_the_quick_suite_on_slurm_finishes_every_run_with_the_local_launchers_numbers",),
    "make gpu-check": (
        "tests/scaleout/test_gpu_check.py::test_make_gpu_check_on_the_cpu_runs_every_step_at_toy_size_into_one_table",),
    'make gpu-check ARGS="quick=true runtime.accelerator=cpu"': (
        "tests/scaleout/test_gpu_check.py::test_make_gpu_check_on_the_cpu_runs_every_step_at_toy_size_into_one_table",),
    'make bench ARGS="quick=true only=sample,startup"': (
        "tests/speed/test_make_bench.py::test_make_bench_quick_prints_the_sampling_and_start_up_rows_with_their_targets",),
}
# Blocks that hold no command lines: files and code (run by their own tests: wider.yaml in test_own_exercise.py, the
# notebook in test_runs.py, the suite's call as tests/suite/test_api.py makes it) and printed output.
NOT_COMMANDS = {"yaml", "python", "text"}


def commands(markdown: str) -> list[str]:
    """The command lines of a Markdown text's code blocks: every line of a shell block (```, ```sh, ```bash), the
    `$ ` lines of a ```console block; a line ending in a backslash joined to the next, a trailing `# comment` left
    out."""
    found = []
    for language, body in re.findall(r"^```(\w*)\n(.*?)^```", markdown, re.S | re.M):
        if language in NOT_COMMANDS:
            continue
        lines = body.replace("\\\n", " ").splitlines()
        if language == "console":
            lines = [ln[2:] for ln in lines if ln.startswith("$ ")]
        for line in lines:
            command = re.sub(r"\s+#\s.*$", "", " ".join(line.split()))
            if command:
                found.append(command)
    return found


def readme_commands() -> list[str]:
    return commands((ROOT / "README.md").read_text())


def test_a_command_line_is_read_from_shell_and_console_blocks_without_its_comment():
    text = ("```sh\nmake train   # one run\nmake sample \\\n  PROMPT=x\n```\n"
            "```console\n$ make bad\nerror: bad\n```\n```text\nmake printed\n```\n```python\nx = 1\n```\n")
    assert commands(text) == ["make train", "make sample PROMPT=x", "make bad"]


def test_every_command_the_readme_shows_names_the_tests_that_run_it():
    shown = readme_commands()
    untested = [c for c in shown if c not in COMMANDS]
    assert not untested, f"README commands no test runs (add each to COMMANDS in {THIS}): {untested}"
    stale = [c for c in COMMANDS if c not in shown]
    assert not stale, f"COMMANDS entries the README no longer shows: {stale}"
    assert all(COMMANDS[c] for c in shown)


def test_every_test_the_table_names_is_collected_by_make_test():
    """`make test`, collecting only: each named test exists, under its name."""
    named = {node for nodes in COMMANDS.values() for node in nodes}
    files = sorted({node.split("::")[0] for node in named})
    p = subprocess.run([*MAKE, "test", f"ARGS=--collect-only -p no:cacheprovider {' '.join(files)}"], cwd=ROOT,
                       env=user_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    collected = set(p.stdout.splitlines())
    missing = sorted(named - collected)
    assert not missing, f"tests COMMANDS names that `make test` does not collect: {missing}"
