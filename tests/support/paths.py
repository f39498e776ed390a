"""Where the test data lives, the one home of the tests' paths: the reference models copied into
tests/fixtures (see its README), the bundled tiny model, the repository's configs, the tiny pretraining
preset and the tiny training corpus."""

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from spacy_elmo.elmo.pretrain.presets import preset_config
from spacy_elmo.elmo.sources.bundled import MODELS_DIR

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
FIXTURES = REPO / "tests" / "fixtures"
ALLENNLP_DIR = FIXTURES / "elmo-allennlp"
BILM_TF_DIR = FIXTURES / "elmo-bilm-tf"
MANYLANGS_DIR = FIXTURES / "elmo-manylangs"
WARMUP_TEXT = REPO / "spacy_elmo" / "elmo" / "data" / "warmup.txt"


@lru_cache(maxsize=None)
def pretrain_config(name: str) -> Path:
    """The pretraining preset `name` as a file, as `init-config` writes it (the repository keeps no copy),
    once per test process, in a folder removed at its exit."""
    folder = Path(tempfile.mkdtemp(prefix="spacy-elmo-presets-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / f"pretrain_{name}.cfg"
    path.write_text(preset_config(name), encoding="utf8")
    return path


# The bundled model small enough for every test, and the pretraining config of the same recipe's sizes.
TINY_MODEL = MODELS_DIR / "fixture-tiny"
PRETRAIN_TINY_CONFIG = pretrain_config("tiny")
# bilm-tf's tiny corpus and its vocabulary, what the pretraining tests train on.
TRAIN_TEXT = BILM_TF_DIR / "train" / "data.txt"
TRAIN_VOCAB = BILM_TF_DIR / "train" / "vocab.txt"
