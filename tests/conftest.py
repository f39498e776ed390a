"""Shared test fixtures: the reference models copied into tests/fixtures (see its README)."""

import pytest

from .paths import ALLENNLP_DIR


@pytest.fixture(scope="session")
def fixture_paths():
    """(options.json, lm_weights.hdf5) of the AllenNLP fixture model (skip connections on)."""
    return ALLENNLP_DIR / "options.json", ALLENNLP_DIR / "lm_weights.hdf5"


@pytest.fixture(scope="session")
def fixture_bilm(fixture_paths):
    from spacy_elmo import load_bilm

    return load_bilm(*fixture_paths)


@pytest.fixture
def fresh_bilm(fixture_paths):
    """A biLM of this test's own, for tests that change its state (stateful calls, warm start)."""
    from spacy_elmo import load_bilm

    return load_bilm(*fixture_paths)
