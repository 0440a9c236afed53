# GPU Planner: one entry point. `make run` = set up and serve on the embedded default
# (SQLite, in-process tasks); `make test` = the whole test suite.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1:8000
# Empty: the suite runs on every core (pytest-xdist `-n auto`); CI passes its own (.ci/run).
PYTEST_ARGS ?=

.PHONY: run setup venv deps dev-deps messages test lint check ci bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip

venv: $(BIN)/python

deps: venv
	$(BIN)/pip install -q -r requirements.txt

dev-deps: venv
	$(BIN)/pip install -q -r requirements-dev.txt

messages: venv
	$(BIN)/python manage.py compilemessages --ignore=.venv -v 0

# Set up the embedded default: database, translations, catalog, demo team and user.
setup: deps messages
	$(BIN)/python manage.py migrate --noinput -v 0
	$(BIN)/python manage.py load_catalog
	$(BIN)/python manage.py load_ru_prices
	$(BIN)/python manage.py load_rate_cards
	$(BIN)/python manage.py setup_demo

run: setup
	$(BIN)/python manage.py runserver $(HOST)

test: dev-deps messages
	$(BIN)/python -m pytest -p no:cacheprovider -rs $(or $(strip $(PYTEST_ARGS)),-n auto)

lint: dev-deps
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

check: dev-deps
	$(BIN)/python manage.py check
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/check-jsonschema --builtin-schema vendor.compose-spec docker-compose.yml

# Benchmarks print their figures; docs/BENCHMARKS.md records them with these commands.
bench: dev-deps
	$(BIN)/pip install -q --no-deps -r requirements-bench.txt
	$(BIN)/python bench/bench_sizing.py
	$(BIN)/python bench/bench_costs.py
	$(BIN)/python bench/bench_plan_page.py
	$(BIN)/python bench/bench_serving_peer.py

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles
