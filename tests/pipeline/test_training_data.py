"""A head listening to `elmo` whose training data holds none of its annotation stops in initialize, with
an error that names the corpus and the command that makes one with it."""

import pytest
import spacy
from spacy.training import Example

from spacy_elmo.pipeline.training_data import MissingAnnotationError, check_annotations, training_corpus
from tests.support.pipelines import TAGGER_ON_ELMO, elmo_config, tiny_tagger_pipeline

WORDS = ["Alice", "went", "to", "Paris", "."]


def examples(nlp, **annotations):
    return [Example.from_dict(nlp.make_doc(" ".join(WORDS)), annotations)]


def test_a_tagger_without_tags_stops_in_initialize():
    nlp = tiny_tagger_pipeline(frozen=True)
    with pytest.raises(MissingAnnotationError) as error:
        nlp.initialize(lambda: examples(nlp, entities=["U-PER", "O", "O", "U-LOC", "O"]))
    message = str(error.value)
    assert "'tagger' learns part-of-speech tags" in message and "the training examples" in message
    assert "python -m spacy project assets projects/downstream" in message
    assert "python -m spacy project run <command> projects/downstream" in message
    nlp.initialize(lambda: examples(nlp, tags=["NNP", "VBD", "TO", "NNP", "."]))


def test_an_ner_without_entities_stops_and_heads_not_listening_are_not_checked():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.add_pipe("ner", config={"model": {"@architectures": "spacy.TransitionBasedParser.v2", **_ner_model()}})
    nlp.add_pipe("tagger", name="plain_tagger")  # its own tok2vec: not the elmo component's business
    no_entities = examples(nlp, tags=["NNP", "VBD", "TO", "NNP", "."])
    with pytest.raises(MissingAnnotationError, match="'ner' learns named entities"):
        nlp.initialize(lambda: no_entities)
    with nlp.select_pipes(disable=["ner"]):  # e.g. frozen in [training]
        nlp.initialize(lambda: no_entities)


def test_no_gold_annotation_at_all_is_no_corpus_to_check():
    """`nlp.initialize()` without examples gets spaCy's placeholder example; labels come from add_label."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.add_pipe("ner", config={"model": {"@architectures": "spacy.TransitionBasedParser.v2", **_ner_model()}})
    nlp.get_pipe("ner").add_label("PER")
    nlp.initialize()
    check_annotations({"ner": "ner"}, examples(nlp), "the training examples")


def _ner_model():
    return {"state_type": "ner", "tok2vec": TAGGER_ON_ELMO["model"]["tok2vec"]}


def test_the_check_reads_only_until_every_head_found_its_annotation():
    nlp = spacy.blank("en")
    tagged = examples(nlp, tags=["NNP", "VBD", "TO", "NNP", "."])[0]
    read = []

    def stream():
        for _ in range(3):
            read.append(1)
            yield tagged

    check_annotations({"tagger": "tagger", "custom": "my_factory"}, stream(), "the training examples")
    assert len(read) == 1


def test_the_corpus_is_named_by_its_path_in_the_config():
    nlp = spacy.blank("en")
    assert training_corpus(None) == "the training examples"
    assert training_corpus(nlp) == "the training examples"  # [paths] train = null
    nlp.config["paths"]["train"] = "corpus/train.spacy"
    assert training_corpus(nlp) == "the training corpus corpus/train.spacy ([corpora.train])"
