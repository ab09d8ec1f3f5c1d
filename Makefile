# Two commands on a fresh machine: `make run` and `make test`. Each creates .venv when it is missing.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: run test unit lint bench install clean browser postgres

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# The engine (planner, catalog, CLI) needs only pydantic, typer and rich: `make run` installs it first and answers
# the example with it, then installs the chat service (torch, Chroma, LangChain, the embedding model).
ENGINE := $(VENV)/.engine

$(ENGINE): pyproject.toml | $(BIN)/python
	@echo "make: installing the engine (pydantic, typer, rich; about a minute on a fresh clone)..."
	$(BIN)/pip install -q -e .
	touch $(ENGINE)

$(STAMP): pyproject.toml | $(ENGINE)
	@echo "make: installing the chat service: torch (CPU), Chroma, LangChain, the multilingual e5 embedding model (a few minutes on a fresh clone)..."
	$(BIN)/pip install -q "torch==2.13.0"
	$(BIN)/pip install -q -e ".[service,dev]"
	touch $(STAMP)

install: $(STAMP)

HOST ?= 127.0.0.1
PORT ?= 8000

run: $(ENGINE)
	@$(BIN)/gpu-advisor run --no-serve
	@$(MAKE) --no-print-directory install
	$(BIN)/gpu-advisor run --no-example --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check service tests evals scripts
	$(BIN)/mypy service

# The browser tests (tests/web) drive Debian's chromium through Playwright; Playwright's own browser download is
# never used. As root with apt (a fresh CI machine), this installs chromium and a CJK font for the screenshots;
# otherwise it says why not, and the browser tests skip with that reason instead of failing.
browser:
	@if command -v chromium >/dev/null 2>&1 && fc-list :lang=zh 2>/dev/null | grep -q .; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei \
			>/dev/null) || echo "make browser: apt-get install chromium failed; the browser tests (tests/web) will skip"; \
	else echo "make browser: chromium missing and no root apt-get; the browser tests (tests/web) will skip"; fi

# The multi-worker tests (tests/deploy) start their own Postgres from Debian's binaries (initdb/pg_ctl in a temp
# dir, 127.0.0.1 only; as root they run it as the `postgres` user). As root with apt this installs them; otherwise
# it says why not, and those tests skip with that reason.
postgres:
	@if command -v pg_ctl >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
			|| echo "make postgres: apt-get install postgresql failed; the multi-worker tests (tests/deploy) will skip"; \
	else echo "make postgres: Postgres missing and no root apt-get; the multi-worker tests (tests/deploy) will skip"; fi

test: lint browser postgres
	$(BIN)/pytest

# The fast tier while editing, on every core: everything but the tiers marked by what they need (servers,
# browser, Postgres, the embedding model, torch, whole-corpus sweeps: pyproject markers) and the CPU calibration
# run. `make test` still runs everything.
UNIT_TIERS := not (integration or browser or postgres or model or torch or slow)
unit: $(STAMP)
	$(BIN)/pytest -m "$(UNIT_TIERS)" --ignore=tests/calibration -p no:cacheprovider -n 2

# bench_load: 50 concurrent clients x 5 turns against a started server (WORKERS=4 for four uvicorn workers);
# bench_answer_size: one chat answer's KB and 20 turns' MB on disk; bench_session_growth: turn 1/50/200 latency
WORKERS ?= 1
bench: $(STAMP)
	$(BIN)/python scripts/bench_plan.py
	$(BIN)/python scripts/bench_answer_size.py
	$(BIN)/python scripts/bench_session_growth.py
	$(BIN)/python scripts/bench_load.py --workers $(WORKERS)

clean:
	rm -rf $(VENV) .data .pytest_cache .mypy_cache .ruff_cache
