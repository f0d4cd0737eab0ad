# The two commands: `make up` serves the whole system, `make test` checks it all.
# Both create .venv/ when it is missing.
SHELL := bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# Quiet, and without the notes pip prints about this machine's local indexes.
PIP := $(PY) -m pip --quiet --disable-pip-version-check
PIP_INSTALL := $(PIP) install -c constraints.txt
PACKAGES := libs/protos libs/errors libs/settings libs/telemetry libs/db libs/grpc libs/embeddings libs/service libs/retrieval \
	services/collections services/repodocs services/search services/gateway cli
PYPROJECTS := $(addsuffix /pyproject.toml,$(PACKAGES))
PROTOS := $(shell find protos -name '*.proto')
UP_ARGS ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# torch first, from this machine's CPU wheel: left to the resolver, the
# sentence-transformers dependency would pull a multi-GB CUDA build.
$(VENV)/.installed: $(VENV)/bin/python $(PYPROJECTS) constraints.txt
	$(PIP) install --upgrade pip hatchling editables setuptools cython 2> >(grep -v 'is ignored' >&2)
	$(PIP_INSTALL) torch 2> >(grep -v 'is ignored' >&2)
	$(PIP_INSTALL) --no-build-isolation $(addprefix -e ,$(PACKAGES)) 2> >(grep -v 'is ignored' >&2)
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed pyproject.toml
	$(PIP_INSTALL) --group dev 2> >(grep -v 'is ignored' >&2)
	touch $@

.PHONY: setup
setup: $(VENV)/.installed ## Create .venv/ with the cograph command in .venv/bin

.PHONY: up
up: setup ## Bring the whole system up on the embedded defaults (UP_ARGS="--port 8080 --data-dir D")
	$(VENV)/bin/cograph up $(UP_ARGS)

.PHONY: protos
protos: $(VENV)/.dev-installed ## Regenerate the gRPC contracts from protos/ into libs/protos/src
	$(PY) libs/protos/generate.py

.PHONY: schema
schema: $(VENV)/.installed ## Write each store service's schema.sql from its migrations (embedded PostgreSQL)
	PYTHONPATH=tests $(PY) -m support.schema

# buf breaking compares protos/ with the main branch's. A checkout without a
# local main (a detached CI checkout) compares with origin/main; with neither,
# it says so and skips rather than compare with nothing.
.PHONY: lint
lint: $(VENV)/.dev-installed ## ruff; buf lint, and buf breaking against main's protos/
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/buf lint protos
	@if git rev-parse -q --verify refs/heads/main >/dev/null; then against=branch=main; \
	elif git rev-parse -q --verify refs/remotes/origin/main >/dev/null; then against=ref=origin/main; \
	else echo "buf breaking: skipped, no main or origin/main branch to compare protos/ with" >&2; exit 0; fi; \
	echo "$(VENV)/bin/buf breaking protos --against '.git#$$against,subdir=protos'"; \
	$(VENV)/bin/buf breaking protos --against ".git#$$against,subdir=protos"

.PHONY: typecheck
typecheck: $(VENV)/.dev-installed ## mypy (strict)
	$(VENV)/bin/mypy libs services cli tests $(wildcard bench/*.py)

# Programs the tests drive from the operating system's packages: chromium for the browser tests
# (tests/e2e/ui, through Playwright; `playwright install` would download a browser build, which
# these machines cannot) and sshd for the SSH credentials test (a loopback git server). apt-get
# update only when the package lists do not know them, or are too old to fetch them.
.PHONY: system-packages
system-packages: ## Debian's chromium and openssh-server for the tests, installed with apt-get when missing
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || missing="$$missing openssh-server"; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "make system-packages: the tests need$$missing from the system's packages;" >&2; \
		echo "  install as root: apt-get install --no-install-recommends$$missing (then run make test again)" >&2; \
		exit 1; \
	fi; \
	install="apt-get install -y -q --no-install-recommends$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	for package in $$missing; do \
		apt-cache policy $$package 2>/dev/null | grep -q 'Candidate: [0-9]' || { apt-get update -q; break; }; \
	done; \
	echo "$$install"; \
	$$install || { apt-get update -q && $$install; }

.PHONY: pytest
pytest: $(VENV)/.dev-installed system-packages ## The whole test suite
	$(PY) -m pytest $(PYTEST_ARGS)

.PHONY: test
test: lint typecheck pytest ## Install what the tests need; lint, types and the whole suite

.PHONY: fmt
fmt: $(VENV)/.dev-installed ## Format and autofix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

.PHONY: clean
clean: ## Remove .venv/ and caches
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
