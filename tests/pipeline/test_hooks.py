"""Docs merged with spaCy's `Doc.from_docs` keep their ELMo data; `restore_vectors`, or the first read of
`doc._.elmo`, brings back the hooks lost in bytes."""

import warnings

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_elmo import restore_vectors
from tests.support.pipelines import elmo_config, tiny_tagger_pipeline


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


def test_after_a_docbin_round_trip_the_first_read_of_doc_elmo_brings_back_elmos_vectors():
    """A tok2vec writes `doc.tensor` (its own 96 wide): after bytes, spaCy's `token.vector` falls back
    to it until the hooks are back; reading `doc._.elmo` (as any listener does) puts them back."""
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.initialize()
    doc = nlp("The bank raised rates .")
    assert doc.tensor.shape[1] != doc._.elmo["vectors"].shape[1]
    saved = DocBin(store_user_data=True, docs=[doc]).to_bytes()
    (again,) = DocBin().from_bytes(saved).get_docs(nlp.vocab)
    assert not again.user_token_hooks  # lost in bytes: spaCy runs no code of ours when reading them
    assert again._.elmo is not None
    for token, original in zip(again, doc):
        np.testing.assert_array_equal(token.vector, original.vector)
    np.testing.assert_array_equal(again[1:3].vector, doc[1:3].vector)
    assert again.similarity(doc) == pytest.approx(1.0)


def test_a_listening_head_on_docs_from_bytes_brings_back_the_hooks():
    nlp = tiny_tagger_pipeline(frozen=True)
    nlp.initialize(lambda: [Example.from_dict(nlp.make_doc("Banks lend ."), {"tags": ["NN", "VB", "."]})])
    doc = nlp("Banks lend money .")
    (again,) = (
        DocBin(store_user_data=True).from_bytes(DocBin(store_user_data=True, docs=[doc]).to_bytes()).get_docs(nlp.vocab)
    )
    nlp.get_pipe("tagger")(again)
    assert again.user_token_hooks
    np.testing.assert_array_equal(again[2].vector, doc[2].vector)


def test_a_vector_hook_of_the_users_own_is_kept():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    doc = Doc(nlp.vocab).from_bytes(nlp("Banks lend .").to_bytes(exclude=["user_hooks"]))
    doc.user_token_hooks["vector"] = lambda token: np.ones(3, dtype=np.float32)
    assert doc._.elmo is not None
    np.testing.assert_array_equal(doc[0].vector, np.ones(3))


TEXTS = ["The bank raised rates .", "Rivers have banks .", "She sat by the bank .", "Rates fell ."]


@pytest.fixture(scope="module")
def bundled():
    """The bundled default biLM alone, as `nlp.add_pipe("elmo")` gives it."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    nlp.initialize()
    return nlp


@pytest.mark.slow
def test_token_vector_after_n_process_is_elmos_without_a_call(bundled):
    serial = list(bundled.pipe(TEXTS))
    docs = list(bundled.pipe(TEXTS, n_process=2, batch_size=2))
    for doc, expected in zip(docs, serial):
        assert not doc.user_token_hooks  # nothing of ours ran on reading the bytes
        for token, want in zip(doc, expected):
            np.testing.assert_allclose(token.vector, want.vector, rtol=1e-5, atol=1e-6)
    assert not serial[0].tensor.size  # the tensor is written in workers only


def test_restore_vectors_says_when_docs_carry_nothing_to_restore():
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    docs = list(nlp.pipe(TEXTS[:2]))
    (kept,) = DocBin(store_user_data=True, docs=docs[:1]).get_docs(nlp.vocab)
    (lost,) = DocBin(docs=docs[1:]).get_docs(nlp.vocab)  # written without store_user_data
    with pytest.warns(UserWarning, match=r"1 of 2 docs carry no doc._.elmo.*store_user_data=True"):
        assert restore_vectors([kept, lost]) == 1
    np.testing.assert_array_equal(kept[0].vector, docs[0][0].vector)
