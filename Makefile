# `make demo` and `make test` do all set-up on a fresh machine: a virtualenv in .venv with the CPU
# build of torch first (a plain `pip install torch` would pull a multi-GB CUDA build), then the package.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_VERSION ?= 2.13.0

.PHONY: demo test install clean

$(BIN)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/pip install --quiet -e ".[test,plot]"
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/python -m spacy_elmo demo

test: install
	$(BIN)/python -m pytest -q tests

clean:
	rm -rf $(VENV) *.egg-info
