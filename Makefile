# The two commands: `make run` and `make test`. Both create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install lint bench screenshots clean docs messages

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Reinstall only when a requirements file changed.
$(STAMP): requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

# The embedded mode is a local development server: DEBUG on, SQLite, and a real Celery
# worker beside it on a broker made of files (.broker/), so no service has to run and
# background work runs in the background. `make run PORT=8123` serves on another port.
PORT ?= 8000
run: export DEBUG := 1
run: export CELERY_BROKER_URL := filesystem://
# The demo's chatbot answers on this machine (demo/responder.py); nothing else local is let in.
run: export EVALHUB_OUTBOUND_ALLOW := 127.0.0.1:8009
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py serve_embedded 127.0.0.1:$(PORT)

# The suite runs on every core (pytest-xdist), each worker on a SQLite database of its own.
# CI's PostgreSQL stage shares one database with its Celery worker: it runs PYTEST_WORKERS=0.
# The docs site is built with --strict: a broken link or anchor fails the tests.
PYTEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

docs: $(STAMP)
	$(BIN)/mkdocs serve -a 127.0.0.1:8001

# The worker pages' translation catalogs, updated from the code and compiled (needs GNU
# gettext). The .mo files are committed, so run and test need no gettext: docs/translating.md.
messages: $(STAMP)
	DEBUG=1 $(BIN)/python manage.py worker_messages

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	for script in bench/bench_*.py; do $(BIN)/python $$script || exit 1; done

# The docs' pictures, as the browser tests last drew them.
screenshots: $(STAMP)
	$(BIN)/python -m pytest -q tests/browser
	mkdir -p docs/screenshots
	cp test-artifacts/*.png docs/screenshots/

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site
