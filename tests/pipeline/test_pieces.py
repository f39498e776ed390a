"""Annotation piece by piece (pipeline/pieces.py): the vectors and stored layers of each doc are those
of its whole layers pooled at once."""

import numpy as np
import spacy

from spacy_elmo.pipeline.pieces import pooled_by_piece
from tests.support.pipelines import EXACT_LAYERS, elmo_config


def test_pieces_give_each_docs_pooled_vectors_and_its_layers_as_stored(fixture_paths):
    options, weights = fixture_paths
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config={**EXACT_LAYERS, **elmo_config(options=str(options), weights=str(weights))})
    docs = [nlp.make_doc("The bank of the river ."), nlp.make_doc(" ".join(["money"] * 700)), nlp.make_doc("Hi")]
    whole = elmo.predict(docs)
    pooled = pooled_by_piece(elmo.model, elmo.pooling, docs, np.float16)
    for doc_layers, (vectors, layers) in zip(whole, pooled):
        np.testing.assert_allclose(vectors, elmo.pooling.predict([doc_layers])[0], rtol=0, atol=1e-6)
        assert layers is not None and layers.dtype == np.float16
        np.testing.assert_array_equal(layers, doc_layers.astype(np.float16))
    assert all(layers is None for _, layers in pooled_by_piece(elmo.model, elmo.pooling, docs, None))
