"""The head's projection (layers/projection.py) is thinc's Linear computed through NumPy's matmul: the same
initial weights for a seed, the same outputs and gradients, and bytes that load either way."""

import numpy as np
import pytest
import spacy
from thinc.api import Linear, fix_random_seed

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.pipeline.layers.listener import ElmoListener
from spacy_elmo.pipeline.layers.projection import projection

X = np.random.default_rng(0).normal(size=(7, 12)).astype(np.float32)
DY = np.random.default_rng(1).normal(size=(7, 5)).astype(np.float32)


def _initialized(layer):
    fix_random_seed(3)
    layer.initialize(X=X)
    return layer


def test_projection_starts_from_the_weights_thincs_linear_draws():
    ours, thincs = _initialized(projection(5)), _initialized(Linear(5))
    np.testing.assert_array_equal(ours.get_param("W"), thincs.get_param("W"))
    np.testing.assert_array_equal(ours.get_param("b"), thincs.get_param("b"))


def test_projection_outputs_and_gradients_match_thincs_linear():
    ours, thincs = _initialized(projection(5)), _initialized(Linear(5))
    thincs.set_param("b", np.arange(5, dtype=np.float32))
    ours.set_param("b", np.arange(5, dtype=np.float32))
    results = []
    for layer in (ours, thincs):
        Y, backprop = layer(X, is_train=True)
        results.append((Y, backprop(DY), layer.get_grad("W"), layer.get_grad("b")))
    for mine, reference in zip(*results):
        np.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-6)


def test_bytes_of_thincs_linear_load_into_the_projection_and_back():
    thincs = _initialized(Linear(5))
    ours = projection(5).from_bytes(thincs.to_bytes())
    np.testing.assert_allclose(ours.predict(X), thincs.predict(X), rtol=1e-5, atol=1e-6)
    again = Linear(5).from_bytes(ours.to_bytes())
    np.testing.assert_array_equal(again.get_param("W"), thincs.get_param("W"))


def test_projection_names_a_width_mismatch():
    layer = _initialized(projection(5))
    with pytest.raises(ElmoError, match="expects 12 input features and got 3"):
        layer.predict(X[:, :3])
    with pytest.raises(ElmoError, match="positive number of features"):
        projection(0)


def test_batch_id_is_the_sum_of_token_hashes_modulo_2_64():
    nlp = spacy.blank("en")
    docs = [nlp("The cat sat on the mat."), nlp(""), nlp("Zebras, zebras!")]
    expected = sum(sum(token.orth for token in doc) % 2**64 for doc in docs)
    assert ElmoListener.get_batch_id(docs) == expected
    assert ElmoListener.get_batch_id(docs[:1]) != ElmoListener.get_batch_id(docs[2:])
