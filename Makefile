# The two commands of the README: `make run` and `make test`. Everything they need is
# installed here, from a fresh clone, Debian packages included.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test bench lint format setup chromium clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput --verbosity 0
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py ensure_local_login
	@echo "Serving on http://$(HOST):$(PORT)/  (Ctrl-C to stop)"
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "Installing Debian chromium (browser tests drive it)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; \
	fi

test: $(STAMP) chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache
