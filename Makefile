# The two commands a new user needs: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
DEPS := $(VENV)/.deps-installed
PORT ?= 8000
HOST ?= 127.0.0.1

.PHONY: run quiet-check test lint format messages bench fuzz-poker fuzz-api fuzz-ws simulate venv clean browser-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(DEPS): requirements/base.txt requirements/dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements/dev.txt
	touch $(DEPS)

venv: $(DEPS)

## make run: install if needed, migrate, load demo data, start API + websockets, worker and beat
## (their lines in var/log/*.log as JSON; the terminal shows the banner, warnings and errors).
run: $(DEPS)
	$(BIN)/python manage.py serve --host $(HOST) --port $(PORT)

## make quiet-check: start `manage.py serve` on the embedded default (a scratch var/, a free port), wait for
## the banner, then count the terminal's lines over an idle minute: at most 10 (tests/platform/test_quiet_run.py).
quiet-check: $(DEPS)
	$(BIN)/python -m pytest -n 0 tests/platform/test_quiet_run.py $(PYTEST_ARGS)

## make test: install if needed and run the whole suite (PostgreSQL + Redis when they answer), on
## PYTEST_WORKERS pytest-xdist workers (2: the machines have 2 cores; never more), each with a
## PostgreSQL server, Redis database and var/ of its own. PYTEST_ARGS are appended, so
## `make test PYTEST_ARGS="-n 0"` runs serially (docs/testing.md).
PYTEST_WORKERS ?= 2
PYTEST_XDIST ?= -n $(PYTEST_WORKERS) --dist loadfile
test: $(DEPS)
	$(BIN)/python -m pytest $(PYTEST_XDIST) $(PYTEST_ARGS)

lint: $(DEPS)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .

format: $(DEPS)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## make messages: the player-facing strings (casino/i18n.py's catalog, the settings' labels; games/help's
## sentences) into casino/locale and games/locale's fr/LC_MESSAGES/django.po, and each .po compiled to its committed .mo (tools/messages.py:
## Babel, pure Python, no gettext tools). Translate the new empty msgstr, then run it again (docs/players.md).
messages: $(DEPS)
	$(BIN)/python tools/messages.py

## make bench: every benchmark, one after the other (see docs/benchmarks.md).
bench: $(DEPS)
	$(BIN)/python manage.py bench all

## make fuzz-poker: the poker services' stateful fuzz, long and with fresh seeds (docs/poker.md).
POKER_FUZZ_EXAMPLES ?= 500
POKER_FUZZ_STEPS ?= 60
fuzz-poker: $(DEPS)
	POKER_FUZZ_EXAMPLES=$(POKER_FUZZ_EXAMPLES) POKER_FUZZ_STEPS=$(POKER_FUZZ_STEPS) \
		$(BIN)/python -m pytest tests/poker/test_stateful.py --timeout=0 $(PYTEST_ARGS)

## make fuzz-api: schemathesis over every documented REST operation (player, operator, compliance), with
## issue 35's hand-made shapes (deep nesting, lone surrogates, NUL, 1e400, 10**400, -0, NaN) in its cases,
## long and with fresh seeds (tests/platform/test_schema_fuzz.py; the suite runs it with a fixed seed and
## 8 examples per operation).
SCHEMA_FUZZ_EXAMPLES ?= 200
fuzz-api: $(DEPS)
	SCHEMA_FUZZ_EXAMPLES=$(SCHEMA_FUZZ_EXAMPLES) SCHEMA_FUZZ_SEED=random \
		$(BIN)/python -m pytest tests/platform/test_schema_fuzz.py --timeout=0 $(PYTEST_ARGS)

## make fuzz-ws: the websocket fuzz over every command of every channel the AsyncAPI document lists, long:
## fresh seeds, WS_FUZZ_SESSIONS sessions of up to WS_FUZZ_FRAMES generated, mutated and shaped frames, and
## every hand-made shape in every message (tests/platform/test_ws_fuzz.py; the suite runs a fixed seed,
## 8 sessions of up to 15 frames, each shape once per channel). Fails on any unanswered frame, closed
## socket, server_error answer or traceback in the server's log (var/test-ws-fuzz.log).
WS_FUZZ_SESSIONS ?= 200
WS_FUZZ_FRAMES ?= 40
fuzz-ws: $(DEPS)
	WS_FUZZ_SESSIONS=$(WS_FUZZ_SESSIONS) WS_FUZZ_FRAMES=$(WS_FUZZ_FRAMES) WS_FUZZ_SEED=random WS_FUZZ_MATRIX=full \
		$(BIN)/python -m pytest tests/platform/test_ws_fuzz.py --timeout=0 $(PYTEST_ARGS)

## make simulate: the fault simulator over many seeds (docs/simulation.md, "A long search"), each
## run in a scratch database of its own; the last line of each run is printed, a failing seed's whole
## output is in var/simulate/seed-N.txt, and the target fails if any seed failed.
## e.g. make simulate SEEDS="$$(seq 1 500)" STEPS=3000 FAULT_RATE=0.2 JOBS=2
SEEDS ?= 1 2 3 4 5
STEPS ?= 2000
FAMILY ?= all
FAULT_RATE ?= 0.08
JOBS ?= 1
simulate: $(DEPS)
	@mkdir -p var/simulate
	@printf '%s\n' $(SEEDS) | xargs -P $(JOBS) -I{} sh -c '$(BIN)/python manage.py simulate_faults --seed {} \
		--steps $(STEPS) --family $(FAMILY) --fault-rate $(FAULT_RATE) > var/simulate/seed-{}.txt 2>&1 \
		&& tail -n 1 var/simulate/seed-{}.txt || { echo "seed {} FAILED: var/simulate/seed-{}.txt"; exit 1; }'

## make browser-deps: Debian's chromium and chromedriver for the real-browser admin test (root, apt).
browser-deps:
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; }

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache
