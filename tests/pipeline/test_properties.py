"""Property tests over the text path with hypothesis: whatever the words (control characters, emoji,
combining marks, very long tokens) and whitespace tokens, vectors are finite, whitespace tokens get none,
a doc's vectors do not depend on its batch, and bytes round trips keep them."""

import numpy as np
import pytest
import spacy
from hypothesis import given
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_elmo import restore_vectors
from tests.support.pipelines import elmo_config
from tests.support.properties import PROPERTY_SETTINGS

WORD_CHARS = st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"), blacklist_characters="\x00")
WORDS = st.one_of(
    st.text(WORD_CHARS, min_size=1, max_size=12),
    st.text(st.sampled_from("\u0301\u0308\u20dd"), min_size=1, max_size=3).map(lambda marks: "e" + marks),
    st.sampled_from(["🙂", "👩‍🔬", "🇩🇪", "\u200b", "\x7f", "\u0007"]),
    st.text(WORD_CHARS, min_size=60, max_size=200),  # beyond ELMo's 48 bytes per token
)
SPACES = st.sampled_from([" ", "\n", "\n\n", "\t", "  "])
DOC_TOKENS = st.lists(st.one_of(WORDS, WORDS, WORDS, SPACES), min_size=0, max_size=30)


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    return nlp


def make_doc(nlp, tokens):
    words = [t for t in tokens if t]
    spaces = [not w.isspace() for w in words]
    return Doc(nlp.vocab, words=words, spaces=spaces)


def annotate(nlp, docs):
    return list(nlp.pipe(docs, batch_size=len(docs) or 1))


@PROPERTY_SETTINGS
@given(tokens=DOC_TOKENS)
def test_vectors_finite_and_whitespace_tokens_have_none(nlp, tokens):
    doc = annotate(nlp, [make_doc(nlp, tokens)])[0]
    vectors = doc._.elmo["vectors"]
    assert vectors.shape == (len(doc), nlp.get_pipe("elmo").model.get_dim("nO"))
    assert np.isfinite(vectors).all()
    for token in doc:
        if token.is_space:
            assert not token.has_vector and not vectors[token.i].any()


@PROPERTY_SETTINGS
@given(tokens=DOC_TOKENS, others=st.lists(DOC_TOKENS, min_size=1, max_size=4), position=st.integers(0, 4))
def test_a_docs_vectors_do_not_depend_on_its_batch(nlp, tokens, others, position):
    alone = annotate(nlp, [make_doc(nlp, tokens)])[0]
    batch = [make_doc(nlp, t) for t in others]
    batch.insert(min(position, len(batch)), make_doc(nlp, tokens))
    inside = annotate(nlp, batch)[min(position, len(others))]
    np.testing.assert_allclose(inside._.elmo["vectors"], alone._.elmo["vectors"], atol=1e-6, rtol=0)


@PROPERTY_SETTINGS
@given(tokens=DOC_TOKENS)
def test_bytes_round_trip_keeps_the_vectors(nlp, tokens):
    doc = annotate(nlp, [make_doc(nlp, tokens)])[0]
    again = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    restore_vectors([again])
    np.testing.assert_array_equal(again._.elmo["vectors"], doc._.elmo["vectors"])
    np.testing.assert_array_equal(again._.elmo["layers"], doc._.elmo["layers"])
    assert [t.has_vector for t in again] == [t.has_vector for t in doc]
