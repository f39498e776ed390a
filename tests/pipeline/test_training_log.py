"""`spacy-elmo.MixLogger.v1` (pipeline/training_log.py): spaCy's console logger, plus one line per
listening head's layer mix at each evaluation, and nothing more where no head mixes."""

import io

import spacy
from spacy.training import Example
from spacy.util import registry

from spacy_elmo.pipeline.training_log import format_mixes
from tests.support.pipelines import tiny_tagger_pipeline


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
