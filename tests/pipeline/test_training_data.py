"""A head listening to `elmo` whose training data holds none of its annotation stops in initialize, with
an error that names the corpus and the command that makes one with it."""

import re

import pytest
import spacy
from spacy.training import Example

from spacy_elmo.pipeline.training_data import (
    LEARNS_FROM,
    MissingAnnotationError,
    annotation_of,
    check_annotations,
    listening_heads,
    training_corpus,
)
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
    check_annotations({"ner": LEARNS_FROM["ner"]}, examples(nlp), "the training examples")


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

    check_annotations({"tagger": LEARNS_FROM["tagger"]}, stream(), "the training examples")
    assert len(read) == 1


def test_the_corpus_is_named_by_its_path_in_the_config():
    nlp = spacy.blank("en")
    assert training_corpus(None) == "the training examples"
    assert training_corpus(nlp) == "the training examples"  # [paths] train = null
    nlp.config["paths"]["train"] = "corpus/train.spacy"
    assert training_corpus(nlp) == "the training corpus corpus/train.spacy ([corpora.train])"


LISTENER = TAGGER_ON_ELMO["model"]["tok2vec"]


@pytest.mark.parametrize(
    "factory, settings, annotations",
    [
        ("senter", {}, {"sent_starts": [1, 0, 0, 1, 0]}),
        ("trainable_lemmatizer", {}, {"lemmas": ["Alice", "go", "to", "Paris", "."]}),
        ("textcat", {}, {"cats": {"TRAVEL": 1.0}}),
        ("textcat_multilabel", {}, {"cats": {"TRAVEL": 1.0, "MONEY": 0.0}}),
        ("spancat", {"spans_key": "places"}, {"spans": {"places": [(14, 19, "LOC")]}}),
        ("spancat_singlelabel", {}, {"spans": {"sc": [(14, 19, "LOC")]}}),
        ("span_finder", {"spans_key": "places"}, {"spans": {"places": [(14, 19, "LOC")]}}),
        ("entity_linker", {}, {"entities": [(0, 5, "PER")], "links": {(0, 5): {"Q1": 1.0}}}),
    ],
)
def test_each_head_kind_finds_its_own_annotation(factory, settings, annotations):
    nlp = spacy.blank("en")
    annotation = annotation_of(factory, settings)
    assert annotation is not None and annotation.found(examples(nlp, **annotations)[0].reference)
    tags_only = examples(nlp, tags=["NNP", "VBD", "TO", "NNP", "."])
    with pytest.raises(MissingAnnotationError, match=re.escape(f"'head' learns {annotation.what}")):
        check_annotations({"head": annotation}, tags_only, "the training examples")


def test_spans_under_another_key_are_not_the_spancats():
    nlp = spacy.blank("en")
    other_key = examples(nlp, spans={"sc": [(14, 19, "LOC")]})
    with pytest.raises(MissingAnnotationError, match=r"doc.spans\['places'\]"):
        check_annotations({"spancat": annotation_of("spancat", {"spans_key": "places"})}, other_key, "the examples")


def test_heads_of_a_listening_tok2vec_are_checked_and_unknown_kinds_named():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.add_pipe("tok2vec", config={"model": {**LISTENER, "width": 16}})
    shared = {"@architectures": "spacy.Tok2VecListener.v1", "width": 16}
    nlp.add_pipe("tagger", config={"model": {"@architectures": "spacy.Tagger.v2", "tok2vec": shared}})
    reduce = {f"use_reduce_{how}": True for how in ("first", "last", "max", "mean")}
    textcat = {"@architectures": "spacy.TextCatReduce.v1", "tok2vec": LISTENER, "exclusive_classes": True, **reduce}
    nlp.add_pipe("textcat", config={"model": textcat})
    nlp.add_pipe("sentencizer")
    with pytest.raises(MissingAnnotationError, match="'tagger' learns part-of-speech tags"):
        nlp.initialize(lambda: examples(nlp, cats={"TRAVEL": 1.0}))
    assert set(listening_heads(nlp, ["tok2vec", "textcat"])) == {"tagger", "textcat"}
    with pytest.warns(UserWarning, match="'sentencizer' \\(factory 'sentencizer'\\) learns from ELMo, but"):
        assert listening_heads(nlp, ["sentencizer"]) == {}
