"""Docs merged with spaCy's `Doc.from_docs` keep their ELMo data; `restore_vectors` brings back the hooks."""

import warnings

import numpy as np
import spacy
from spacy.tokens import Doc

from spacy_elmo import restore_vectors
from tests.support.pipelines import elmo_config


def test_from_docs_keeps_each_parts_vectors_and_layers():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    first, second = nlp("The bank raised rates ."), nlp("Rivers  have banks .")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # spaCy's W101 ("skipping ... custom extension") would be an error
        merged = Doc.from_docs([first, second])
    assert len(merged) == len(first) + len(second)
    np.testing.assert_array_equal(
        merged._.elmo["vectors"], np.concatenate([first._.elmo["vectors"], second._.elmo["vectors"]])
    )
    np.testing.assert_array_equal(
        merged._.elmo["layers"], np.concatenate([first._.elmo["layers"], second._.elmo["layers"]], axis=1)
    )
    assert restore_vectors([merged]) == 1
    np.testing.assert_array_equal(merged[len(first) + 2].vector, second[2].vector)
    assert merged[0].similarity(first[0]) > 0.999
    again = Doc(nlp.vocab).from_bytes(merged.to_bytes())
    restore_vectors([again])
    np.testing.assert_array_equal(again[1].vector, first[1].vector)
