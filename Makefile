# The two commands: `make run` and `make test`. Everything else is set up by them.
#
# The virtualenv is installed from requirements/dev.lock (exact versions and hashes, for every
# platform and Python 3.11+), with plain pip: nothing else is needed on the machine. `make lock`
# regenerates the lock files from pyproject.toml (after adding or bumping a dependency).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK := requirements/dev.lock
RUN_LOCK := requirements/run.lock
UV := .tools/bin/uv
UV_VERSION := 0.13.9
LOCK_EXTRAS := --extra test --extra bench

# A .venv whose interpreter is gone (a removed pyenv version, an upgraded system Python) or older
# than 3.11 is rebuilt, not used; so is one of another Python version than PYTHON=... given on the
# command line (`make test PYTHON=python3.13`).
VERSION_OF = $(shell $(1) -c 'import sys; print("%d.%d.%d" % sys.version_info[:3] if sys.version_info >= (3, 11) else "old")' 2>/dev/null)
VENV_VERSION := $(call VERSION_OF,$(BIN)/python)
ifeq ($(origin PYTHON),command line)
WANTED_VERSION := $(call VERSION_OF,$(PYTHON))
else
WANTED_VERSION := $(VENV_VERSION)
endif
ifneq ($(and $(filter-out old,$(VENV_VERSION)),$(filter $(VENV_VERSION),$(WANTED_VERSION))),)
VENV_OK := yes
else
VENV_OK := no
endif

.PHONY: run test bench openapi pools lint typecheck lock clean

# setup.py and domain/_sound.c: the solver's optional C extension, rebuilt when its source changes.
$(STAMP): $(LOCK) pyproject.toml setup.py domain/_sound.c
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed (set PYTHON=...)")'
	@if [ "$(VENV_OK)" != yes ] && [ -e $(VENV) ]; then \
		echo "make: $(VENV) has no usable Python 3.11+ ($(or $(VENV_VERSION),interpreter gone)) or not the one of PYTHON=$(PYTHON): rebuilding it"; \
		rm -rf $(VENV); fi
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

ifneq ($(VENV_OK),yes)
.PHONY: $(STAMP)
endif

run: $(STAMP)
	$(BIN)/canfield serve

# The lint (ruff, the rules in pyproject.toml; lint-imports, the layer contracts there) and the
# type check (mypy --strict over domain/ and service/) run first: CI runs `make test`, so a finding
# fails the build like a failing test.
# The suite runs on every core (pytest-xdist: one worker per core, each its own pytest session with
# its own test database and server processes; an idle worker takes tests queued for the other, so
# the long solver checks do not finish alone). `make test PYTEST_WORKERS=0` runs it in one process.
PYTEST_WORKERS ?= auto
test: lint typecheck
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	$(BIN)/python -m bench

openapi: $(STAMP)
	$(BIN)/canfield openapi --all-into openapi

# The solver-verified deal pools (slow; resumable: run again after Ctrl-C). Not part of `make test`.
pools: $(STAMP)
	$(BIN)/canfield pool build --ruleset open-runs --count 1500
	$(BIN)/canfield pool build --ruleset classic --count 500
	$(BIN)/canfield pool build --ruleset draw-one --count 500

typecheck: $(STAMP)
	$(BIN)/python -m mypy

# Re-resolve the locks from pyproject.toml (+ requirements/build.in): the newest versions the
# bounds allow, for every platform and Python 3.11+. dev.lock is everything `make` installs;
# run.lock is its runtime part (the same versions), for the Dockerfile. uv is fetched from PyPI
# into .tools/ the first time. `make lock UPGRADE=` keeps the versions already locked where
# the bounds still allow them (only new or changed requirements move).
UPGRADE ?= --upgrade
COMPILE = $(UV) pip compile --quiet --universal --python-version 3.11 --generate-hashes --custom-compile-command 'make lock'
lock:
	test -x $(UV) || ($(PYTHON) -m venv .tools && .tools/bin/pip install --quiet uv==$(UV_VERSION))
	$(COMPILE) $(UPGRADE) pyproject.toml requirements/build.in $(LOCK_EXTRAS) -o $(LOCK)
	$(COMPILE) pyproject.toml requirements/build.in --constraint $(LOCK) -o $(RUN_LOCK)
	$(MAKE) $(STAMP)

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache
