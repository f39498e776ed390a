"""Where the test data lives: the reference models copied into tests/fixtures (see its README)."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
ALLENNLP_DIR = FIXTURES / "elmo-allennlp"
BILM_TF_DIR = FIXTURES / "elmo-bilm-tf"
MANYLANGS_DIR = FIXTURES / "elmo-manylangs"
WARMUP_TEXT = REPO / "spacy_elmo" / "data" / "warmup.txt"
