# Every target installs what it needs into .venv/ (idempotent: reinstalls only when pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo bench test lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[evals,dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)  ## the main job (until training lands: the verifier benchmark)
	$(PY) scripts/bench_verifier.py

bench: demo

test: $(STAMP)  ## the default test run (excludes slow and gpu tests)
	$(PY) -m pytest -m "not slow and not gpu" rewards tests

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV)
