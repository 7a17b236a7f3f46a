# tinygpt-ablations. `make ablations` runs every exercise; `make test` runs the tests.
# Each target builds .venv from pyproject.toml first if it is missing or stale.
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
PROMPT ?=
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: train sweep ablations ablations-quick sample report ui test reliability bench clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The CPU wheel first: an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

train: $(VENV)/.installed  ## the lessons' base model, one run (ARGS="model.n_head=1 ...", RESUME=<run id>)
	$(PY) -m lm.train $(ARGS) $(if $(RESUME),--resume $(RESUME))

sweep: $(VENV)/.installed  ## a grid of runs, Hydra's multirun syntax (ARGS="model.n_head=1,2,4 model.n_layer=2,4" SEEDS=3)
	$(PY) -m lm.train -m $(if $(SEEDS),seeds=$(SEEDS)) $(ARGS)

ablations: $(VENV)/.installed  ## every exercise (ABLATIONS=nomask,heads SEEDS=1 ARGS="workers=2")
	$(PY) -m lm.suite $(if $(ABLATIONS),'ablations=[$(ABLATIONS)]') $(if $(SEEDS),seeds=$(SEEDS)) $(ARGS)

ablations-quick: $(VENV)/.installed  ## every exercise at toy size: a smoke test in under a minute
	$(PY) -m lm.suite quick=true $(if $(ABLATIONS),'ablations=[$(ABLATIONS)]') $(ARGS)

sample: $(VENV)/.installed  ## text from the newest `make train` run (RUN=<id>, PROMPT="ROMEO:", ARGS="temperature=0.5")
	$(PY) -m lm.sample $(if $(RUN),run=$(RUN)) $(if $(PROMPT),'prompt=$(PROMPT)') $(ARGS)

report: $(VENV)/.installed  ## reports/report.html and reports/report.md from the MLflow store
	$(PY) -m analysis.report $(ARGS)

ui: $(VENV)/.installed  ## MLflow's UI over the store, on this machine only (PORT=5001; HOST=0.0.0.0 exposes it: see README)
	$(PY) -m lm.ui --host '$(HOST)' --port '$(PORT)' $(ARGS)

test: $(VENV)/.installed
	$(PY) -m pytest -q $(ARGS)

reliability: $(VENV)/.installed  ## kills, Ctrl-C, two suites at once, determinism, divergence, bad input, safety; prints the figures
	$(PY) -m pytest -q tests/reliability $(ARGS); status=$$?; $(PY) -m tests.reliability.figures; exit $$status

bench: $(VENV)/.installed
	$(PY) -m lm.bench $(ARGS)

clean:
	rm -rf reports .pytest_cache
