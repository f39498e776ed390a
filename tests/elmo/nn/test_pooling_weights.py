"""The one rule of fixed pooling (elmo/nn/pooling_weights.py): "mean", "top" or one weight per layer, token
layer first; a wrong setting named when the config is built, a wrong count when the biLM's layers are known."""

import numpy as np
import pytest

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.nn.pooling_weights import check_pooling, pooling_weights


def test_mean_weighs_every_layer_alike():
    assert pooling_weights("mean", 3).tolist() == pytest.approx([1 / 3] * 3)


def test_top_is_the_last_lstm_layer_alone():
    assert pooling_weights("top", 3).tolist() == [0.0, 0.0, 1.0]


def test_given_weights_are_kept_in_order_as_float32():
    weights = pooling_weights([0.5, 0.25, 0.25], 3)
    assert weights.dtype == np.float32 and weights.tolist() == [0.5, 0.25, 0.25]


def test_a_weight_count_unlike_the_layer_count_is_named():
    with pytest.raises(ElmoError, match="pooling has 2 weights but the biLM has 3 layers"):
        pooling_weights([0.5, 0.5], 3)


@pytest.mark.parametrize("setting", ["mean", "top", [1.0, 0.0, 0.0], [1, 2]])
def test_settings_of_the_right_shape_pass(setting):
    check_pooling(setting)


@pytest.mark.parametrize(
    "setting, message",
    [
        ("max", "'max' is not one of mean, top"),
        ([], "non-empty list"),
        ([1.0, True], "list of layer weights"),
        (1, "non-empty list"),  # no list at all
        (None, "non-empty list"),
    ],
)
def test_settings_of_the_wrong_shape_are_named(setting, message):
    with pytest.raises(ElmoError, match=message):
        check_pooling(setting)
