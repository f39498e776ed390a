"""Shared test fixtures: the reference models copied into tests/fixtures (see its README)."""
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
ALLENNLP_DIR = FIXTURES / "elmo-allennlp"
BILM_TF_DIR = FIXTURES / "elmo-bilm-tf"


@pytest.fixture(scope="session")
def fixture_paths():
    """(options.json, lm_weights.hdf5) of the AllenNLP fixture model (skip connections on)."""
    return ALLENNLP_DIR / "options.json", ALLENNLP_DIR / "lm_weights.hdf5"


@pytest.fixture(scope="session")
def fixture_bilm(fixture_paths):
    from spacy_elmo import load_bilm

    return load_bilm(*fixture_paths)
