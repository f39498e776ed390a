# `make demo` and `make test` do all set-up on a fresh machine: a virtualenv in .venv with torch's CPU
# build first, from PyTorch's own CPU wheel index (a plain `pip install torch` from PyPI pulls the CUDA
# build and its NVIDIA libraries, several GB), then the package. For CUDA name another of PyTorch's
# indexes, e.g. `make demo TORCH_INDEX=https://download.pytorch.org/whl/cu126`; `TORCH_INDEX=` (empty)
# installs from pip's configured index, as CI does where only a local mirror is reachable.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_VERSION ?= 2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: demo test test-all lint install corpora clean

$(BIN)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==$(TORCH_VERSION) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/pip install --quiet -e ".[test,plot,lint,ray,release]"
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/python -m spacy_elmo demo

# The everyday suite: the tests marked slow (training runs, subprocesses, compiling) are skipped.
test: install
	$(BIN)/python -m pytest -q tests

# Everything, as CI runs it: `--slow` (tests/conftest.py) runs the slow tests too.
test-all: install
	$(BIN)/python -m pytest -q --slow tests

# ruff (lint and format) and mypy, as configured in pyproject.toml.
lint: install
	$(BIN)/ruff check spacy_elmo tests benchmarks projects
	$(BIN)/ruff format --check spacy_elmo tests benchmarks projects
	$(BIN)/mypy

# The downstream corpora (tags, entities, both) under projects/downstream/corpus: the public files
# from GitHub, or from a local copy when SPACY_ELMO_DATA names one (its labeled/ folders).
DOWNSTREAM := projects/downstream
LABELED = $(SPACY_ELMO_DATA)/labeled
MIRROR_VARS = $(if $(SPACY_ELMO_DATA),--vars.ud $(LABELED)/ud_english_ewt --vars.uner $(LABELED)/uner_english_ewt \
	--vars.uner_train $(LABELED)/uner_english_ewt/raw_2022-12-02_commit0c7ce0d)
corpora: install
	$(BIN)/python -m spacy project assets $(DOWNSTREAM) $(MIRROR_VARS)
	$(BIN)/python -m spacy project run convert $(DOWNSTREAM)

clean:
	rm -rf $(VENV) *.egg-info
