# `make demo` and `make test` do all set-up on a fresh machine: a virtualenv in .venv with the CPU
# build of torch first (a plain `pip install torch` would pull a multi-GB CUDA build), then the package.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_VERSION ?= 2.13.0

.PHONY: demo test test-fast lint install clean

$(BIN)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/pip install --quiet -e ".[test,plot,lint]"
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/python -m spacy_elmo demo

test: install
	$(BIN)/python -m pytest -q tests

# The unit tests only: the end-to-end ones (marked slow: training runs, subprocesses) are left out.
test-fast: install
	$(BIN)/python -m pytest -q -m "not slow" tests

# ruff (lint and format) and mypy, as configured in pyproject.toml.
lint: install
	$(BIN)/ruff check spacy_elmo tests benchmarks
	$(BIN)/ruff format --check spacy_elmo tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) *.egg-info
