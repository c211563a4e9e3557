# Pallas — two commands on a fresh machine with Python 3.11+ and make:
#   make run    create .venv, install, migrate, start the bot
#   make test   install the test extras and run the whole suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test test-fast quick fuzz lint format bench clean check-python

# pytest-xdist workers for `make test` / `make test-fast` (JOBS=1: one process, no xdist);
# a file's tests stay on one worker, so module-scoped fixtures (a Redis server, a bot) start once
JOBS ?= 2
XDIST = $(if $(filter 1,$(JOBS)),,-n $(JOBS) --dist loadfile)

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Pallas needs Python 3.11+, found " + sys.version.split()[0])'

$(BIN)/python: | check-python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# the plugins in [tool.nonebot.plugins] (what `nb plugin install` writes) are installed too
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m pallas.onebot.plugin_loading | xargs -r $(BIN)/python -m pip install --quiet
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m pallas.onebot.plugin_loading | xargs -r $(BIN)/python -m pip install --quiet
	@touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	@test -f .env || echo "note: no .env file; using embedded defaults (see .env.example)"
	$(BIN)/python bot.py

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest $(XDIST)

# the inner loop before a commit: unit + integration (no bot process, no browser)
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q $(XDIST) tests/unit tests/integration

# the inner loop: the unit tests only (pure logic, no bot process, no browser)
quick: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -x tests/unit

# the generated-input properties at length (random seed; EXAMPLES=N examples per property)
fuzz: $(VENV)/.installed-test
	PALLAS_FUZZ_EXAMPLES=$(or $(EXAMPLES),2000) $(BIN)/python -m pytest -q \
		tests/integration/test_edge_properties.py tests/unit/config/test_config_properties.py \
		tests/unit/core/test_storable.py

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pallas.cli deps --check --quiet
	$(BIN)/python -m pallas.cli structure --check --quiet

format: $(VENV)/.installed-test
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
