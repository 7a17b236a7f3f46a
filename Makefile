# tinygpt-ablations. `make ablations` runs every exercise; `make test` runs the tests.
# Options, for every target: key=value words in ARGS (ARGS="quick=true only=startup"), checked against the command's
# schema before any heavy import (lm/settings/options.py; train, sweep and ablations: Hydra's overrides against conf/).
# A bare switch is the switch on (ARGS=quick is quick=true). train's --cfg, -m and --resume are its only flags.
# Each target builds .venv from requirements.lock first if it is missing or stale.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# The corpora: a local folder when there is one (CI and this workplace keep them in ../shared/data),
# otherwise the pinned, hash-checked download into ~/.cache/tinygpt.
export TINYGPT_DATA_DIR ?= $(if $(wildcard ../shared/data/SHA256SUMS),$(abspath ../shared/data))

ABLATIONS ?=
SEEDS ?=
ARGS ?=
RESUME ?=
RUN ?=
EXERCISE ?=
BUDGET ?=
PROMPT ?=
HOST ?= 127.0.0.1
PORT ?= 5000
A ?=
B ?=
# User text never enters a recipe's command line: there make would expand `$5` and `$(shell ...)` in it and the shell
# would parse its quotes. The pattern, for every target: each variable of USER_TEXT that is set is exported raw
# ($(value ...)) as TINYGPT_MAKE_<NAME>, the variable itself is not exported (exporting expands it), and the recipe
# names the variables in a template that lm/commands/makeargs.py fills in and execs without a shell:
#     $(PY) -m lm.commands.makeargs lm.commands.sample run=RUN prompt=PROMPT ARGS
# (key=VAR: one word; key=[VAR]: a list; --opt=VAR: two words; ARGS: its words, split at spaces, quotes grouping).
# A new variable is one name here and one line of VARIABLES in lm/commands/makeargs.py.
USER_TEXT := ABLATIONS SEEDS ARGS RESUME RUN PROMPT HOST PORT EXERCISE BUDGET A B
unexport $(USER_TEXT)
# A variable this make was not given is unexported too: a make run from a recipe (the tests drive make) must not
# inherit the outer make's TINYGPT_MAKE_ARGS.
$(foreach v,$(USER_TEXT),$(if $(or $(value $(v)),$(filter command environment,$(origin $(v)))),\
  $(eval export TINYGPT_MAKE_$(v) := $$(value $(v))),$(eval unexport TINYGPT_MAKE_$(v))))

.PHONY: train sweep ablations ablations-quick sample heads report compare decide calibrate export ui test reliability bench gpu-check schema help clean

$(VENV)/.installed: pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# Every package at the version and hash that requirements.lock pins (torch: the CPU wheel 2.13.0+cpu), the same
	# on every machine; then the project itself, which brings nothing more. docs/scale.md: how to update the lock.
	$(PY) -m pip install -q --require-hashes -r requirements.lock
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

train: $(VENV)/.installed  ## the lessons' base model, one run (ARGS="model.n_head=1 ...", RESUME=<run id>)
	$(PY) -m lm.commands.makeargs lm.commands.train ARGS --resume=RESUME

sweep: $(VENV)/.installed  ## a grid of runs, Hydra's multirun syntax (ARGS="model.n_head=1,2,4 model.n_layer=2,4" SEEDS=3)
	$(PY) -m lm.commands.makeargs lm.commands.train -m seeds=SEEDS ARGS

ablations: $(VENV)/.installed  ## every exercise (ABLATIONS=nomask,heads SEEDS=1 ARGS="workers=2")
	$(PY) -m lm.commands.makeargs lm.commands.suite ablations=[ABLATIONS] seeds=SEEDS ARGS

ablations-quick: $(VENV)/.installed  ## every exercise at toy size: a smoke test in under a minute
	$(PY) -m lm.commands.makeargs lm.commands.suite quick=true ablations=[ABLATIONS] ARGS

sample: $(VENV)/.installed  ## text from the newest `make train` run (RUN=<id>, PROMPT="ROMEO:", ARGS="temperature=0.5")
	$(PY) -m lm.commands.makeargs lm.commands.sample run=RUN prompt=PROMPT ARGS

heads: $(VENV)/.installed  ## knock-out of every head of finished runs: RUN=<id> prints its head table; EXERCISE=heads (ARGS="quick=true force=true")
	$(PY) -m lm.commands.makeargs lm.commands.heads run=RUN exercise=EXERCISE ARGS

report: $(VENV)/.installed  ## reports/report.html and reports/report.md from the MLflow store (ARGS="quick=true ablations=heads")
	$(PY) -m lm.commands.makeargs analysis.report ARGS

compare: $(VENV)/.installed  ## two stores' verdict tables side by side, and the claims that moved (A=mlruns B=/tmp/new/mlruns ARGS="quick=true"): reports/compare.html and .md
	$(PY) -m lm.commands.makeargs analysis.compare a=A b=B ARGS

decide: $(VENV)/.installed  ## seeds added in rounds to what the claims table leaves undecided, within BUDGET runs (30) or CPU-minutes (60min); ARGS="quick=true plan=true"
	$(PY) -m lm.commands.makeargs analysis.decide budget=BUDGET ARGS

calibrate: $(VENV)/.installed  ## the claims table's error rate, 10,000 simulated stores through the table (ARGS="tables=500 workers=2 record=true"; about 15 min on one core)
	$(PY) -m lm.commands.makeargs analysis.calibration ARGS

export: $(VENV)/.installed  ## the runs, their histories and per-variant aggregates as Parquet and CSV (reports/export; ARGS="quick=true")
	$(PY) -m lm.commands.makeargs analysis.runs ARGS

ui: $(VENV)/.installed  ## MLflow's UI over the store, on this machine only (PORT=5001; HOST=0.0.0.0 exposes it: see README; ARGS="server=[--workers,4]" passes options on to mlflow server)
	$(PY) -m lm.commands.makeargs lm.commands.ui host=HOST port=PORT ARGS

test: $(VENV)/.installed  ## the tests, on every core (ARGS="tests/config -k help"); CI's SLURM, PostgreSQL and Chromium parts skip without them
	$(PY) -m lm.commands.makeargs pytest -q -n auto --dist loadscope --no-loadscope-reorder ARGS

reliability: $(VENV)/.installed  ## kills, Ctrl-C, two suites at once, determinism, divergence, bad input, safety, SLURM's faults, the team server's restart, login and secrets; prints the figures
	$(PY) -m lm.commands.makeargs pytest -q tests/reliability tests/slurm tests/server ARGS; status=$$?; $(PY) -m tests.reliability.figures; exit $$status

bench: $(VENV)/.installed  ## the speed table, side by side (ARGS="quick=true only=startup threads=2"; 4-5 min, quick 1-2)
	$(PY) -m lm.commands.makeargs lm.tools.bench ARGS

schema: $(VENV)/.installed  ## experiments/exercise.schema.json, the exercise files' JSON Schema for editors, from the model the suite checks them with
	$(PY) -m lm.tools.schema

help:  ## this list: every target and what it does (each command's own options: ARGS=--help)
	@awk -F ':.*## ' '/^[a-z][a-z-]*:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(firstword $(MAKEFILE_LIST))

clean:  ## the reports and pytest's cache
	rm -rf reports .pytest_cache

gpu-check: $(VENV)/.installed  ## on a lent GPU, over 10 minutes: fp32 CUDA against CPU, the quick suite on CUDA, the gpu and large profiles timed (ARGS="quick=true runtime.accelerator=cpu" on a CPU)
	$(PY) -m lm.commands.makeargs lm.tools.gpucheck ARGS
