# The two commands: `make run` and `make test`. Everything else is set up by them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench openapi pools lint typecheck clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed (set PYTHON=...)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/canfield serve

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench

openapi: $(STAMP)
	$(BIN)/canfield openapi --output openapi/openapi.json

# The solver-verified deal pools (slow; resumable: run again after Ctrl-C). Not part of `make test`.
pools: $(STAMP)
	$(BIN)/canfield pool build --ruleset open-runs --count 1500
	$(BIN)/canfield pool build --ruleset classic --count 500
	$(BIN)/canfield pool build --ruleset draw-one --count 500

typecheck: $(STAMP)
	$(BIN)/python -m mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
