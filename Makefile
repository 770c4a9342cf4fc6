# Bayes — two commands: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export REFLEX_USE_NPM := 1
export REFLEX_TELEMETRY_ENABLED := false
export PATH := $(CURDIR)/$(BIN):$(PATH)


# What the tests add to `setup`: their Python packages, then Chromium and PostgreSQL.
TEST_DEPS := scripts/install-deps.sh requirements-test.txt && $(BIN)/python -c "import pytest, playwright"
TEST_SERVICES := scripts/ensure-apt.sh chromium:chromium initdb:postgresql

# Tesseract's language data for OCR (the engine itself comes inside the tesserocr wheel)
TESSDATA := /usr/share/tesseract-ocr/5/tessdata
TESSDATA_PKGS := $(foreach l,eng deu fra osd,$(TESSDATA)/$(l).traineddata:tesseract-ocr-$(l))

.PHONY: run dev test test-fast lint format lock setup setup-python setup-lint setup-test migrate clean help

help:
	@echo "make run   - set up (venv, deps, redis, migrations, admin) and start web, workers, index, redis (supervised)"
	@echo "make dev   - same, with hot reload (frontend :3000, backend :8000)"
	@echo "make test  - set up (plus Chromium), lint, and run the whole test suite"
	@echo "make test-fast - the unit tests only (under 2 minutes)"
	@echo "make lint  - ruff check, ruff format --check, mypy (settings in pyproject.toml), no function over 80 lines"
	@echo "make format - ruff format and ruff check --fix over the tree"
	@echo "make lock  - recompile requirements*.txt (every transitive pin) from requirements*.in"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip 2>&1 | { grep -v "is ignored" || true; }

# pip runs only when a requirements file's content changed since the last install.
# The Python packages (and what pip needs to build them) are all lint and format need.
setup-python: $(BIN)/python
	@scripts/ensure-apt.sh pkg-config:pkg-config g++:g++
	@pkg-config --exists icu-i18n || scripts/ensure-apt.sh libicu-dev:libicu-dev  # pyicu builds against it
	@scripts/install-deps.sh requirements.txt
	@$(BIN)/python -c "import reflex, dramatiq, sqlmodel, supervisor, psutil, qdrant_client"

setup: setup-python
	@scripts/ensure-apt.sh redis-server:redis-server $(TESSDATA_PKGS)

setup-lint: setup-python
	@$(TEST_DEPS)

setup-test: setup setup-lint
	@$(TEST_SERVICES)

run: setup
	$(BIN)/python -m bayes_app.cli run

dev: setup
	$(BIN)/python -m bayes_app.cli run --dev

migrate: setup
	$(BIN)/python -m bayes_app.cli migrate

# The suite in one pass on both cores (pytest-xdist), a whole file per worker (module fixtures
# are built once), in the order tests/support/ordering.py gives: by what a file needs running,
# the longest first (tests/durations.json; `scripts/test_durations.py` records it again), with
# one shared app per worker at the end. Lint runs beside the suite's first minutes, which leave a
# core idle while the first stacks start; its output follows the suite's, and a lint failure
# fails `make test`. `--durations` lists the slowest steps (what to shorten next). A test that
# boots the app (`slow`: a real browser or the whole process set on two loaded cores) and fails
# is run once more (`flaky`, set by conftest; `-rfER` names it under "rerun test summary info",
# and "why the rerun tests failed first" prints its first error); one failing twice fails the
# suite. The reruns are read after each CI run: each is a race to find (docs/performance.md).
# The stacks' frontend is built once, beside the test requirements' install (pip keeps one core
# busy): tests/support/frontend.py, `prebuild`; if that fails, the first stack builds it.
test: setup
	@$(BIN)/python -m tests.support.frontend prebuild > /dev/null 2>&1 &
	@$(TEST_DEPS) && $(TEST_SERVICES)
	@lint_log=$$(mktemp); ( $(MAKE) --no-print-directory lint > $$lint_log 2>&1 ) & lint_pid=$$!; \
	TESTS_FRONTEND_PREBUILD=1 $(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder -rfER --durations=30 $(PYTEST_ARGS); rc=$$?; \
	if wait $$lint_pid; then echo "lint: passed"; else echo "lint: FAILED"; rc=1; fi; \
	cat $$lint_log; rm -f $$lint_log; exit $$rc

test-fast: setup-test
	$(BIN)/python -m pytest tests/unit -q $(PYTEST_ARGS)

lint: setup-lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python scripts/long_functions.py
	$(BIN)/mypy

format: setup-lint
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

lock: setup-test
	$(BIN)/uv pip compile requirements.in -o requirements.txt --universal --python-version 3.11 \
		--annotation-style line --custom-compile-command "make lock" -q
	$(BIN)/uv pip compile requirements-test.in -o requirements-test.txt --universal --python-version 3.11 \
		--annotation-style line --custom-compile-command "make lock" -q

clean:
	rm -rf $(VENV) .web .web-tests
