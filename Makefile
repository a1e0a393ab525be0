# The two commands of the README: `make run` and `make test`. Everything they need is
# installed here, from a fresh clone, Debian packages included.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run serve load test fuzz bench lint format setup chromium clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput --verbosity 0
	$(BIN)/python manage.py ensure_local_login
	$(BIN)/python manage.py load_demo --curator admin
	@echo "Serving on http://$(HOST):$(PORT)/  (Ctrl-C to stop)"
	@echo "Background tasks (imports): one task worker (manage.py task_worker) runs beside the server,"
	@echo "restarted by scripts/supervise.sh if it ever exits"
	@scripts/supervise.sh $(BIN)/python manage.py task_worker --no-reload --verbosity 0 & WORKER=$$!; \
		trap 'kill $$WORKER 2>/dev/null' EXIT INT TERM; \
		$(BIN)/python manage.py runserver $(HOST):$(PORT)

# The production-like stack: gunicorn, PostgreSQL, Redis and a task worker (docs/deploy.md).
serve: $(STAMP)
	HOST=$(HOST) PORT=$(PORT) scripts/serve.sh

# A bounded load test of the production-like stack (bench/load.py; figures in docs/performance.md).
LOAD_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres
load: $(STAMP)
	DATABASE_URL=$(LOAD_DATABASE_URL) $(BIN)/python -m bench.load $(LOAD_ARGS)

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "Installing Debian chromium (browser tests drive it)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; \
	fi

test: $(STAMP) chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The property and fuzz tests with a large budget: 50 times the examples of `make test`, and
# schemathesis' coverage phase over the whole API (tests/budget.py). About 20 minutes.
FUZZ_SCALE ?= 50
fuzz: $(STAMP)
	OCM_FUZZ_SCALE=$(FUZZ_SCALE) OCM_FUZZ_COVERAGE=1 $(BIN)/python -m pytest -q \
		tests/security/test_api_fuzz.py tests/security/test_format_routes_fuzz.py \
		tests/security/test_archive_fuzz.py \
		tests/formats/test_properties_limits.py tests/formats/test_properties_json_and_v01.py \
		tests/formats/test_properties_token_text.py tests/formats/test_fast_path.py $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache
