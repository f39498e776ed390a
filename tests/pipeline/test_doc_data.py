"""ELMo rows follow the tokens through spaCy's retokenizer and `Span.as_doc`: a merged token gets the mean
of its parts' rows, split pieces their parent's, a span's doc its own tokens' rows (doc_data.py)."""

import numpy as np
import pytest
import spacy
from spacy.pipeline.functions import merge_entities, merge_noun_chunks
from spacy.tokens import Doc, Span

from spacy_elmo import restore_vectors
from spacy_elmo.pipeline.doc_data import MisalignedDataError
from tests.support.pipelines import elmo_config

WORDS = ["I", "will", "withdraw", "money", "in", "New", "York", "City", "tomorrow", "."]
CITY = slice(5, 8)


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    return nlp


@pytest.fixture
def doc(nlp):
    """The sentence with a parse (for noun chunks) and "New York City" as an entity, through `elmo`."""
    doc = Doc(
        nlp.vocab,
        words=WORDS,
        heads=[2, 2, 2, 2, 2, 7, 7, 4, 2, 2],
        deps=["nsubj", "aux", "ROOT", "dobj", "prep", "compound", "compound", "pobj", "npadvmod", "punct"],
        pos=["PRON", "AUX", "VERB", "NOUN", "ADP", "PROPN", "PROPN", "PROPN", "NOUN", "PUNCT"],
    )
    doc.ents = [Span(doc, CITY.start, CITY.stop, "GPE")]
    return nlp(doc)


def _copies(doc):
    return doc._.elmo["vectors"].copy(), doc._.elmo["layers"].copy()


def _check_merged(doc, vectors, layers, before):
    """`doc` is the original with tokens `before` merged into one."""
    assert len(doc) == len(WORDS) - (before.stop - before.start) + 1
    expected = np.concatenate([vectors[: before.start], vectors[before].mean(0, keepdims=True), vectors[before.stop :]])
    for token, row in zip(doc, expected):
        np.testing.assert_allclose(token.vector, row, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(doc._.elmo["vectors"], expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(doc._.elmo["layers"][:, before.start], layers[:, before].mean(1), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(doc._.elmo["layers"][:, -1], layers[:, -1])


def test_merge_entities(doc):
    vectors, layers = _copies(doc)
    merged = merge_entities(doc)
    assert merged[CITY.start].text == "New York City"
    np.testing.assert_array_equal(merged[CITY.start + 1].vector, vectors[CITY.stop])  # "tomorrow"
    _check_merged(merged, vectors, layers, CITY)


def test_merge_noun_chunks(doc):
    vectors, layers = _copies(doc)
    merged = merge_noun_chunks(doc)
    assert [t.text for t in merged] == ["I", "will", "withdraw", "money", "in", "New York City", "tomorrow", "."]
    _check_merged(merged, vectors, layers, CITY)
    np.testing.assert_allclose(merged[4:7].vector, np.stack([t.vector for t in merged[4:7]]).mean(0), rtol=1e-6)
    np.testing.assert_allclose(merged.vector, np.stack([t.vector for t in merged]).mean(0), rtol=1e-6, atol=1e-7)


def test_a_split_gives_each_piece_its_parents_row(doc):
    vectors, layers = _copies(doc)
    with doc.retokenize() as retokenizer:
        retokenizer.split(doc[2], ["with", "draw"], heads=[(doc[2], 1), doc[1]])
    assert [t.text for t in doc[2:5]] == ["with", "draw", "money"]
    np.testing.assert_array_equal(doc[2].vector, vectors[2])
    np.testing.assert_array_equal(doc[3].vector, vectors[2])
    np.testing.assert_array_equal(doc[4].vector, vectors[3])
    np.testing.assert_array_equal(doc[-1].vector, vectors[-1])  # no IndexError past the old length
    assert doc._.elmo["layers"].shape[1] == len(doc)
    np.testing.assert_array_equal(doc._.elmo["layers"][:, 3], layers[:, 2])


def test_as_doc_gets_the_spans_rows(doc):
    vectors, layers = _copies(doc)
    span = doc[CITY.start : CITY.stop + 1]
    part = span.as_doc(copy_user_data=True)
    assert restore_vectors([part]) == 1
    for token, row in zip(part, vectors[CITY.start : CITY.stop + 1]):
        np.testing.assert_array_equal(token.vector, row)
    np.testing.assert_array_equal(part._.elmo["layers"], layers[:, CITY.start : CITY.stop + 1])
    np.testing.assert_allclose(part.vector, span.vector, rtol=1e-6)


def test_a_token_that_cuts_through_a_computed_one_is_refused(doc):
    with doc.retokenize() as retokenizer:
        retokenizer.split(doc[5], ["Ne", "w"], heads=[(doc[5], 1), doc[6]])
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[6:8])  # "w York": part of "New" and all of "York"
    assert doc[6].text == "w York"
    with pytest.raises(MisalignedDataError, match="'w York'"):
        _ = doc[6].vector


def test_data_saved_without_offsets_is_used_while_the_tokens_match(doc):
    vectors, _ = _copies(doc)
    del doc._.elmo["offsets"]  # as spacy-elmo stored it before the offsets
    np.testing.assert_array_equal(doc[3].vector, vectors[3])
    del doc._.elmo["offsets"]
    merge_entities(doc)
    with pytest.raises(MisalignedDataError, match="older spacy-elmo"):
        _ = doc[3].vector
