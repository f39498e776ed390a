"""The training phase ends when training ends, whatever runs the loop: after spaCy's own training loop
returns (what `spacy train` runs), or after a user's loop of `nlp.update` and `nlp.evaluate`, serving
caches nothing in the frozen-layer cache, while the evaluations during training still reuse it."""

import io

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from thinc.api import Config

from spacy_elmo.pipeline.component import Phase
from spacy_elmo.pipeline.training_calls import called_by_training
from tests.support.paths import CONFIGS
from tests.support.pipelines import tiny_tagger_pipeline

SENTENCES = [
    ("Alice went to the bank .", ["NNP", "VBD", "TO", "DT", "NN", "."]),
    ("Bob sat on the river bank .", ["NNP", "VBD", "IN", "DT", "NN", "NN", "."]),
    ("Money talks .", ["NN", "VBZ", "."]),
]


def _served(n):
    """`n` docs of words never seen in training."""
    return [f"Served{i} document{i} number{i} ." for i in range(n)]


def _corpus(path):
    vocab = spacy.blank("en").vocab
    docbin = DocBin()
    for text, tags in SENTENCES:
        docbin.add(Doc(vocab, words=text.split(), tags=tags))
    docbin.to_disk(path)
    return str(path)


@pytest.mark.slow
def test_after_spacys_training_loop_serving_caches_nothing(tmp_path, fixture_paths):
    corpus = _corpus(tmp_path / "train.spacy")
    overrides = {
        "paths.train": corpus,
        "paths.dev": corpus,
        "paths.elmo_options": str(fixture_paths[0]),
        "paths.elmo_weights": str(fixture_paths[1]),
        "training.max_steps": 6,
        "training.eval_frequency": 2,
        "training.logger": {"@loggers": "spacy.ConsoleLogger.v1"},
    }
    config = Config().from_disk(CONFIGS / "tagger_elmo.cfg", overrides=overrides)
    nlp = init_nlp(config)
    elmo = nlp.get_pipe("elmo")
    train(nlp, None, stdout=io.StringIO(), stderr=io.StringIO())
    assert len(elmo.cache) == len(SENTENCES), "the training and dev docs were cached while training"
    served = list(nlp.pipe(_served(300)))
    assert elmo.phase is Phase.SERVING and len(elmo.cache) == 0
    assert all(doc._.elmo is not None for doc in served)


def test_after_a_users_own_loop_serving_caches_nothing():
    nlp = tiny_tagger_pipeline(frozen=True)
    examples = [Example.from_dict(nlp.make_doc(text), {"tags": tags}) for text, tags in SENTENCES]
    nlp.initialize(lambda: examples)
    elmo = nlp.get_pipe("elmo")
    optimizer = nlp.create_optimizer()
    dev = [Example.from_dict(nlp.make_doc("A dev sentence ."), {"tags": ["DT", "NN", "NN", "."]})]
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
        nlp.evaluate(dev)
        assert elmo.phase is Phase.TRAINING, "an evaluation inside the loop keeps the phase"
    assert len(elmo.cache) == len(SENTENCES) + 1, "the dev doc was cached by the first evaluation"
    nlp(_served(1)[0])
    assert elmo.phase is Phase.SERVING and len(elmo.cache) == 0
    list(nlp.pipe(_served(20)))
    assert len(elmo.cache) == 0


def test_an_annotating_elmo_piped_inside_update_keeps_training():
    nlp = tiny_tagger_pipeline(frozen=True)
    examples = [Example.from_dict(nlp.make_doc(text), {"tags": tags}) for text, tags in SENTENCES]
    nlp.initialize(lambda: examples)
    elmo = nlp.get_pipe("elmo")
    nlp.update(examples, sgd=nlp.create_optimizer(), annotates=["elmo"])
    assert elmo.phase is Phase.TRAINING and len(elmo.cache) == len(SENTENCES)


def test_called_by_training_sees_update_and_evaluate_only(monkeypatch):
    nlp = spacy.blank("en")
    seen = []
    monkeypatch.setattr(nlp, "pipe", lambda docs, **kwargs: (seen.append(called_by_training()), docs)[1])
    nlp.evaluate([Example.from_dict(nlp.make_doc("a b"), {})])
    assert seen == [True]
    assert called_by_training() is False
