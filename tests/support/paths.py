"""Where the test data lives, the one home of the tests' paths: the reference models copied into
tests/fixtures (see its README), the bundled tiny model, the repository's configs and the tiny training
corpus."""

from pathlib import Path

from spacy_elmo.models.bundled import MODELS_DIR

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
FIXTURES = REPO / "tests" / "fixtures"
ALLENNLP_DIR = FIXTURES / "elmo-allennlp"
BILM_TF_DIR = FIXTURES / "elmo-bilm-tf"
MANYLANGS_DIR = FIXTURES / "elmo-manylangs"
WARMUP_TEXT = REPO / "spacy_elmo" / "data" / "warmup.txt"
# The bundled model small enough for every test, and the pretraining config of the same recipe's sizes.
TINY_MODEL = MODELS_DIR / "fixture-tiny"
PRETRAIN_TINY_CONFIG = CONFIGS / "pretrain_tiny.cfg"
# bilm-tf's tiny corpus and its vocabulary, what the pretraining tests train on.
TRAIN_TEXT = BILM_TF_DIR / "train" / "data.txt"
TRAIN_VOCAB = BILM_TF_DIR / "train" / "vocab.txt"
