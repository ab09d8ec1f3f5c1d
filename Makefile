# Two commands on a fresh machine: `make run` and `make test`. Each creates .venv when it is missing.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: run test lint bench install clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q "torch==2.13.0"
	$(BIN)/pip install -q -e ".[service,dev]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/gpu-advisor run

lint: $(STAMP)
	$(BIN)/ruff check service tests evals scripts
	$(BIN)/mypy service

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python scripts/bench_plan.py

clean:
	rm -rf $(VENV) .data .pytest_cache .mypy_cache .ruff_cache
