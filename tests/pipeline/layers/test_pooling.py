"""Fixed pooling (pipeline/layers/pooling.py, `spacy-elmo.Pooling.v1`): each doc's layers weighed by the
fixed weights into one row per token, gradients sent back by the same weights, bad settings named."""

import numpy as np
import pytest

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.pipeline.layers.pooling import build_pooling_v1
from spacy_elmo.pipeline.layers.read_rows import ROW_WISE

rng = np.random.default_rng(0)
DOCS = [rng.normal(size=(3, n, 4)).astype(np.float32) for n in (2, 5)]


@pytest.mark.parametrize(
    "weights, expected",
    [("mean", lambda X: X.mean(axis=0)), ("top", lambda X: X[-1]), ([1.0, 2.0, 0.0], lambda X: X[0] + 2 * X[1])],
)
def test_each_doc_is_its_layers_weighed(weights, expected):
    Ys, _ = build_pooling_v1(weights)(DOCS, is_train=False)
    for X, Y in zip(DOCS, Ys):
        assert Y.dtype == np.float32 and Y.shape == X.shape[1:]
        np.testing.assert_allclose(Y, expected(X), rtol=1e-6, atol=1e-6)


def test_gradients_go_back_to_each_layer_by_its_weight():
    Ys, backprop = build_pooling_v1([0.5, 0.0, 2.0])(DOCS, is_train=True)
    dXs = backprop([np.ones_like(Y) for Y in Ys])
    for X, dX in zip(DOCS, dXs):
        assert dX.shape == X.shape
        assert dX[:, 0, 0].tolist() == [0.5, 0.0, 2.0]


def test_no_docs_give_no_rows():
    Ys, backprop = build_pooling_v1()([], is_train=True)
    assert Ys == [] and backprop([]) == []


def test_the_layer_works_row_by_row_and_keeps_its_weights_as_a_list():
    model = build_pooling_v1((0.2, 0.8))
    assert model.attrs[ROW_WISE] is True and model.attrs["weights"] == [0.2, 0.8]


def test_bad_weights_are_named_when_the_layer_is_built_and_a_wrong_count_when_it_runs():
    with pytest.raises(ElmoError, match="'max' is not one of mean, top"):
        build_pooling_v1("max")
    with pytest.raises(ElmoError, match="pooling has 2 weights but the biLM has 3 layers"):
        build_pooling_v1([0.2, 0.8])(DOCS, is_train=False)
