"""End to end in another language: `python -m spacy train` on the shipped tagger config, unchanged but
for its language and the model path, with an ELMoForManyLangs model; the saved pipeline loads with
`spacy.load` once the model's directory is gone."""

import shutil
import subprocess
import sys

import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_elmo.elmo.manylangs.model import ManyLangsBiLM
from spacy_elmo.pipeline.layers import get_bilm
from tests.support.paths import CONFIGS, MANYLANGS_DIR

CONFIG = CONFIGS / "tagger_elmo.cfg"
SENTENCES = [
    ("Москва — столица России .", ["PROPN", "PUNCT", "NOUN", "PROPN", "PUNCT"]),
    ("Я люблю жизнь .", ["PRON", "VERB", "NOUN", "PUNCT"]),
    ("Мы живём в Москве .", ["PRON", "VERB", "ADP", "PROPN", "PUNCT"]),
    ("Это очень красивый город .", ["PRON", "ADV", "ADJ", "NOUN", "PUNCT"]),
]


def _corpus(path, copies):
    vocab = spacy.blank("ru").vocab
    docbin = DocBin()
    for text, tags in SENTENCES * copies:
        docbin.add(Doc(vocab, words=text.split(), tags=tags))
    docbin.to_disk(path)
    return path


@pytest.mark.slow
def test_russian_tagger_on_a_manylangs_model_trains_saves_and_loads(tmp_path):
    model = tmp_path / "ru.model"
    shutil.copytree(MANYLANGS_DIR / "words-2layers-relu", model)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "spacy", "train", str(CONFIG), "--output", str(out), "--nlp.lang", "ru"]
    command += ["--paths.train", str(_corpus(tmp_path / "train.spacy", 4))]
    command += ["--paths.dev", str(_corpus(tmp_path / "dev.spacy", 1))]
    command += ["--paths.elmo_model", str(model), "--training.max_steps", "6"]
    command += ["--training.eval_frequency", "3"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    shutil.rmtree(model)
    nlp = spacy.load(out / "model-last")
    assert nlp.lang == "ru"
    assert isinstance(get_bilm(nlp.get_pipe("elmo").model), ManyLangsBiLM)
    doc = nlp("Москва — красивый город .")
    assert all(token.tag_ for token in doc) and doc[0].has_vector
