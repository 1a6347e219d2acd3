# opolyx: every target bootstraps what it needs on a fresh machine.
#   make run    the whole system on embedded defaults
#   make test   every test (lint and type checks included)
#   make bench  the benchmarks, each printing its figures next to a baseline
#   make docs   every service's AsyncAPI document and the gateway's OpenAPI, into docs/api/

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
TOOLS  := .tools
UV     := $(TOOLS)/bin/uv
VENV   := .venv
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(abspath $(VENV))
RUN    := $(UV) run --frozen --no-sync

.PHONY: help bootstrap sync run test lint typecheck unit e2e chart bench docs clean e2e-deps pg-deps

help:
	@echo "make run    - play opolyx locally"
	@echo "make test   - bootstrap and run every test"
	@echo "make bench  - print the benchmark figures"
	@echo "make docs   - write the AsyncAPI and OpenAPI documents into docs/api/"

# uv itself comes from PyPI into a private tools venv, so nothing is needed by hand.
$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet "uv==0.13.9"

uv.lock: $(UV) pyproject.toml $(wildcard libs/*/pyproject.toml services/*/pyproject.toml)
	$(UV) lock --python $(PYTHON)
	@touch uv.lock

$(VENV)/.synced: $(UV) uv.lock
	$(UV) sync --frozen --all-packages --python $(PYTHON)
	@touch $@

sync: $(VENV)/.synced

bootstrap: sync

run: sync
	$(RUN) python scripts/run_local.py

PY_DIRS  := libs services tests bench scripts deploy
SRC_DIRS := $(wildcard libs/*/src) $(wildcard services/*/src)

lint: sync
	$(RUN) ruff check $(PY_DIRS)
	$(RUN) ruff format --check $(PY_DIRS)

# Test, bench and deploy code too. The test directories share module names (conftest.py), so
# each is checked on its own; those under tests/ import their helpers relatively, as the
# package `tests` (package bases), the others by name from their own directory.
NAMED_CODE_DIRS := $(wildcard libs/*/tests) $(wildcard services/*/tests) bench scripts deploy

typecheck: sync
	$(RUN) mypy --strict $(SRC_DIRS)
	@for dir in $(NAMED_CODE_DIRS); do \
	  echo "mypy --strict $$dir"; $(RUN) mypy --strict $$dir || exit 1; done
	$(RUN) mypy --strict --explicit-package-bases tests

# Libraries, services and the integration tests (real nats-server, PostgreSQL; two gateway
# tests drive the web client in Chromium, so it is installed first: they skip without it).
unit: sync pg-deps e2e-deps
	$(RUN) pytest libs services tests --ignore=tests/e2e --ignore=tests/chart

# The browser tests run in a pytest process of their own: Playwright's sync API keeps an
# event loop running in the main thread, which the asyncio tests must not inherit.
e2e: sync e2e-deps
	$(RUN) pytest tests/e2e

test: lint typecheck unit e2e chart

# The Helm chart rendered and linted by the Helm library, every object validated against the
# Kubernetes schemas, the chart checked against the services' code, the image's install steps.
chart: sync pg-deps
	$(RUN) pytest tests/chart

# The PostgreSQL test fixture runs a throwaway cluster from Debian's binaries when no
# Docker engine answers.
pg-deps:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { apt-get update && apt-get install -y --no-install-recommends postgresql; }

# The browser tests drive Debian's chromium through Playwright (no browser download).
e2e-deps:
	@command -v chromium >/dev/null || { apt-get update && apt-get install -y --no-install-recommends chromium; }

bench: sync
	$(RUN) python bench/rules.py
	$(RUN) python bench/gateway.py
	$(RUN) python -m opolyx_table.bench
	$(RUN) python -m opolyx_progression.bench
	$(RUN) python -m opolyx_chat.bench
	$(RUN) python bench/messaging.py
	$(RUN) python bench/bots.py
	$(RUN) python bench/gateway_attack.py
	$(RUN) python bench/replay.py

# Generated from the services' typed handlers and declared subjects (not committed).
docs: sync
	$(RUN) python scripts/write_api_docs.py --out docs/api

clean:
	rm -rf $(VENV) $(TOOLS) .pytest_cache .mypy_cache .ruff_cache
