"""User text through `make` itself: every variable that carries it, with quotes, dollars, backticks, commas, `=`,
non-ASCII letters and nothing at all, arrives at the program exactly as typed or is refused in one line naming the
variable, and none of it reaches a shell. TINYGPT_MAKEARGS_ECHO=1 makes lm/commands/makeargs.py print the argv it would
start the program with; one test starts `make sample` for real and reads the prompt back from the sample."""
import json
import subprocess

import pytest
import torch

from lm.model import checkpoint
from lm.model.model import GPT, GPTConfig
from tests.conftest import DATA, MAKE, user_env
from tests.reliability import harness

VALUES = {
    "apostrophe and double quote": "What is the time o' the day? \"Tis",
    "dollar, $(...) and backticks": "cost $5 $(id) `touch {marker}` $(touch {marker}) $(shell touch {marker})",
    "comma and =": "a,b=c",
    "non-ASCII letters": "Grüße,Ωmega",
    "empty": "",
}
# variable: (the target that reads it, the argv that value must become)
TARGETS = {
    "PROMPT": ("sample", lambda v: [f"prompt={v}"]),
    "RUN": ("sample", lambda v: [f"run={v}"]),
    "RESUME": ("train", lambda v: ["--resume", v]),
    "HOST": ("ui", lambda v: [f"host={v}", "port=5000"]),
    "PORT": ("ui", lambda v: ["host=127.0.0.1", f"port={v}"]),
    "ABLATIONS": ("ablations", lambda v: [f"ablations=[{v}]"]),
    "SEEDS": ("ablations", lambda v: [f"seeds={v}"]),
    "ARGS": ("train", str.split),  # none of the values that arrive has quotes in it
}
# What is refused rather than passed on: an empty value (but ARGS, whose empty value is no words), exercise names
# that are not names, seeds that are not a number, and ARGS with an unclosed quote.
REFUSED = {(v, "empty") for v in TARGETS if v != "ARGS"} | {
    ("ABLATIONS", "apostrophe and double quote"), ("ABLATIONS", "dollar, $(...) and backticks"),
    ("ABLATIONS", "comma and ="), *(("SEEDS", case) for case in VALUES), ("ARGS", "apostrophe and double quote")}


def make(*args: str, env: dict | None = None, echo: bool = True) -> subprocess.CompletedProcess:
    """`make` as a user runs it, the test's python as PY; with the echo hook, lm.commands.makeargs prints the argv instead of
    starting the program."""
    return subprocess.run([*MAKE, *args], cwd=harness.ROOT, env=user_env(env, echo=echo), capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("case", VALUES)
@pytest.mark.parametrize("variable", TARGETS)
def test_user_text_through_make_arrives_intact_or_is_refused_naming_the_variable(variable, case, tmp_path):
    marker = tmp_path / "ran"
    value = VALUES[case].format(marker=marker)
    target, expected = TARGETS[variable]
    p = make(target, f"{variable}={value}")
    if (variable, case) in REFUSED:
        first = p.stderr.splitlines()[0] if p.stderr else ""
        outcome = f"refused, naming {variable}"
        problems = [w for w, bad in [(f"exit status {p.returncode}, not 2", "Error 2" not in p.stderr),
                                     (f"the first line does not name {variable}: {p.stderr!r}",
                                      not first.startswith(f"error: {variable}")),
                                     ("the program started", p.stdout != "")] if bad]
    else:
        arrived = json.loads(p.stdout) if p.returncode == 0 else p.stderr
        outcome = "arrived intact"
        problems = [] if arrived == expected(value) else [f"arrived as {arrived!r}, not {expected(value)!r}"]
    if marker.exists():
        problems.append("a shell ran a command from it")
    harness.record("make_text", **{f"{variable}, {case}": outcome if not problems else "; ".join(problems)})
    assert not problems, problems


def test_a_prompt_given_in_the_environment_keeps_its_dollars_and_leading_spaces():
    p = make("sample", env={"PROMPT": "  cost $5 $(id)"})
    assert json.loads(p.stdout) == ["prompt=  cost $5 $(id)"]


def test_args_words_group_with_quotes_and_keep_their_backslashes():
    p = make("sample", "RUN=abc", """ARGS=temperature=0.5 "prompt=o' the day\\n" 'x="q"' #5""")
    assert json.loads(p.stdout) == ["run=abc", "temperature=0.5", "prompt=o' the day\\n", 'x="q"', "#5"]


def test_a_count_of_seeds_and_a_list_of_exercises_arrive():
    p = make("ablations", "ABLATIONS=nomask, heads", "SEEDS=2", "ARGS=workers=1")
    assert json.loads(p.stdout) == ["ablations=[nomask,heads]", "seeds=2", "workers=1"]


def test_make_sample_starts_from_the_prompt_as_typed_with_its_escapes(tmp_path):
    """The real `make sample`, no echo: the sample printed starts with the prompt, its \\n a newline."""
    chars = sorted(set((DATA / "tinyshakespeare.txt").read_text()))
    assert {"'", "$", "3", "?", "\n"} <= set(chars)  # tinyshakespeare has one digit, 3
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=len(chars), block_size=16, n_layer=1, n_head=2, n_embd=16))
    checkpoint.save(tmp_path / "model.pt", model, chars, None)
    p = make("sample", "PROMPT=What o' the day? $3\\nJULIET:", f"ARGS=checkpoint={tmp_path / 'model.pt'} length=20",
             echo=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("What o' the day? $3\nJULIET:")
    bad = make("sample", "PROMPT=ROMEO:\\q", f"ARGS=checkpoint={tmp_path / 'model.pt'}", echo=False)
    assert bad.stderr.splitlines()[0] == ("error: prompt: '\\\\q' is not an escape; the escapes are \\n (newline), "
                                          "\\t (tab) and \\\\ (a backslash)")


def test_python_m_lm_sample_decodes_the_same_escapes(tmp_path, capsys):
    """docs/options.md's `python -m lm.commands.sample prompt='ROMEO:\\nJULIET:\\n'`, and \\t, \\\\ and a stray backslash."""
    from lm.commands import sample as sample_command
    from lm.model import sample

    assert sample.unescape("a\\tb\\\\n\\n") == "a\tb\\n\n"
    chars = sorted(set((DATA / "tinyshakespeare.txt").read_text()))
    checkpoint.save(tmp_path / "model.pt", GPT(GPTConfig(vocab_size=len(chars), block_size=16, n_layer=1, n_head=2,
                                                         n_embd=16)), chars, None)
    assert sample_command.main([f"checkpoint={tmp_path / 'model.pt'}", "prompt=ROMEO:\\nJULIET:\\n", "length=5"]) == 0
    assert capsys.readouterr().out.startswith("ROMEO:\nJULIET:\n")
    assert sample_command.main([f"checkpoint={tmp_path / 'model.pt'}", "prompt=ROMEO:\\"]) == 2
    assert capsys.readouterr().err.startswith("error: prompt: '\\\\' is not an escape")


def test_the_resume_line_a_killed_run_prints_runs_through_a_shell_and_make_with_the_same_words():
    from lm.commands import makeargs

    args = ["sample.prompt=What is the time o' the day? \"Tis", "tracking.run_name=a b", "x=$HOME\\n", "plain=1"]
    line = makeargs.command("train", args, RESUME="0123abcd")
    assert line.startswith("make train ")
    # the user pastes it into a shell; the echo hook shows what lm.commands.train would get
    pasted = " ".join(MAKE) + line.removeprefix("make")
    p = subprocess.run(["bash", "-c", pasted], cwd=harness.ROOT, env=user_env(echo=True), capture_output=True, text=True,
                       timeout=120)
    assert json.loads(p.stdout) == [*args, "--resume", "0123abcd"], p.stderr


def test_make_decide_passes_its_budget_and_args():
    p = make("decide", "BUDGET=60min", "ARGS=quick=true plan=true")
    assert json.loads(p.stdout) == ["budget=60min", "quick=true", "plan=true"]
