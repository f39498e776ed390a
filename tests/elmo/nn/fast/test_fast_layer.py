"""What every fast LSTM layer shares (elmo/nn/fast/fast_layer.py): it is a snapshot of an exact layer, so it refuses
to be initialised, and it runs both directions together only, saying so instead of computing wrongly."""

import pytest
import torch

from spacy_elmo.elmo.nn.errors import FastModeError
from spacy_elmo.elmo.nn.fast.fast_bilm import make_fast
from spacy_elmo.elmo.nn.fast.fast_layer import FastLayer


def test_a_fast_layer_refuses_initialisation_and_a_single_direction(fixture_bilm):
    fast = make_fast(fixture_bilm, "int8")
    layer = fast.lstm.layers[0]
    assert isinstance(layer, FastLayer)
    with pytest.raises(FastModeError, match="snapshot of an exact layer"):
        layer.reset_parameters()
    x = torch.zeros(1, 1, 2, 4)
    with pytest.raises(FastModeError, match="both directions together only"):
        layer(x, [2, 2], layer.zero_state(1, x), slice(0, 1))
