"""`spacy-elmo.MixLogger.v1` (pipeline/training_log.py): spaCy's console logger, plus one line per
listening head's layer mix at each evaluation, and nothing more where no head mixes; its `finalize`
(spaCy's training loop calls it when it returns) releases the frozen-layer cache."""

import io

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import registry
from thinc.api import Config

from spacy_elmo.pipeline.training_log import format_mixes
from tests.support.paths import CONFIGS
from tests.support.pipelines import tiny_tagger_pipeline

SENTENCES = [
    ("Alice went to the bank .", ["NNP", "VBD", "TO", "DT", "NN", "."]),
    ("Bob sat on the river bank .", ["NNP", "VBD", "IN", "DT", "NN", "NN", "."]),
    ("Money talks .", ["NN", "VBZ", "."]),
]


def initialized_tagger():
    nlp = tiny_tagger_pipeline(frozen=True)
    doc = nlp.make_doc("The bank rose .")
    nlp.initialize(lambda: [Example.from_dict(doc, {"tags": ["DT", "NN", "VBD", "."]})])
    return nlp


def test_each_heads_mix_is_one_line_of_softmaxed_weights_and_gamma():
    nlp = initialized_tagger()
    (line,) = format_mixes(nlp).splitlines()
    assert line.startswith("elmo mix tagger: s = [") and " gamma = 1.0000" in line
    weights = [float(w) for w in line.split("[")[1].split("]")[0].split()]
    assert len(weights) == 3 and abs(sum(weights) - 1) < 1e-3


def test_a_pipeline_without_mixes_prints_none():
    assert format_mixes(spacy.blank("en")) == ""


def test_the_logger_prints_the_mixes_after_each_evaluation_only():
    nlp = initialized_tagger()
    stdout = io.StringIO()
    log_step, finalize = registry.loggers.get("spacy-elmo.MixLogger.v1")()(nlp, stdout, io.StringIO())
    log_step(None)  # a training step without an evaluation
    assert "elmo mix" not in stdout.getvalue()
    info = {
        "epoch": 0,
        "step": 1,
        "score": 0.5,
        "other_scores": {},
        "losses": {"elmo": 0.0, "tagger": 1.0},
        "checkpoints": [],
    }
    log_step(info)
    finalize()
    assert stdout.getvalue().count("elmo mix tagger: s = [") == 1


def test_finalize_ends_the_training_of_the_elmo_component():
    nlp = initialized_tagger()
    elmo = nlp.get_pipe("elmo")
    _, finalize = registry.loggers.get("spacy-elmo.MixLogger.v1")()(nlp, io.StringIO(), io.StringIO())
    nlp.update([Example.from_dict(nlp.make_doc("The bank rose ."), {"tags": ["DT", "NN", "VBD", "."]})])
    assert elmo.cache.live and len(elmo.cache) == 1
    finalize()
    assert not elmo.cache.live and len(elmo.cache) == 0


def _corpus(path):
    vocab = spacy.blank("en").vocab
    docbin = DocBin()
    for text, tags in SENTENCES:
        docbin.add(Doc(vocab, words=text.split(), tags=tags))
    docbin.to_disk(path)
    return str(path)


@pytest.mark.slow
def test_when_spacys_training_loop_returns_the_cache_holds_nothing(tmp_path, fixture_paths):
    corpus = _corpus(tmp_path / "train.spacy")
    overrides = {
        "paths.train": corpus,
        "paths.dev": corpus,
        "paths.elmo_model": str(fixture_paths[0].parent),
        "training.max_steps": 6,
        "training.eval_frequency": 2,
    }
    nlp = init_nlp(Config().from_disk(CONFIGS / "tagger_elmo.cfg", overrides=overrides))
    elmo = nlp.get_pipe("elmo")
    train(nlp, None, stdout=io.StringIO(), stderr=io.StringIO())
    assert elmo.cache.store.misses == len(SENTENCES) and elmo.cache.store.hits > 0, "the loop used the cache"
    assert not elmo.cache.live and len(elmo.cache) == 0 and elmo.cache.store.size == 0
    assert all(doc._.elmo is not None for doc in nlp.pipe(["Served text ."]))
    assert len(elmo.cache) == 0
