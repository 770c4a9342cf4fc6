# Bayes — two commands: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export REFLEX_USE_NPM := 1
export REFLEX_TELEMETRY_ENABLED := false
export PATH := $(CURDIR)/$(BIN):$(PATH)

RUNTIME_STAMP := $(VENV)/.runtime-installed
TEST_STAMP := $(VENV)/.test-installed

.PHONY: run dev test setup setup-test system-deps system-deps-test migrate bench clean help

help:
	@echo "make run   - set up (venv, deps, redis, migrations, admin) and start web + worker + redis"
	@echo "make dev   - same, with hot reload (frontend :3000, backend :8000)"
	@echo "make test  - set up (plus Chromium) and run the whole test suite"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip 2>&1 | { grep -v "is ignored" || true; }

# pip runs only when a requirements file changed since the last install.
$(RUNTIME_STAMP): requirements.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt 2>&1 | { grep -v "is ignored" || true; }
	$(BIN)/python -c "import reflex, dramatiq, sqlmodel, honcho"  # fail loudly if pip failed
	touch $@

$(TEST_STAMP): requirements-test.txt $(RUNTIME_STAMP)
	$(BIN)/pip install -q -r requirements-test.txt 2>&1 | { grep -v "is ignored" || true; }
	$(BIN)/python -c "import pytest, playwright"
	touch $@

system-deps:
	@scripts/ensure-apt.sh redis-server:redis-server

system-deps-test: system-deps
	@scripts/ensure-apt.sh chromium:chromium initdb:postgresql

setup: $(RUNTIME_STAMP) system-deps

setup-test: $(TEST_STAMP) system-deps-test

run: setup
	$(BIN)/python -m bayes_app.cli run

dev: setup
	$(BIN)/python -m bayes_app.cli run --dev

migrate: setup
	$(BIN)/python -m bayes_app.cli migrate

test: setup-test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .web
