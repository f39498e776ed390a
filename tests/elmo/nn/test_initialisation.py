"""The trainer starts from bilm-tf's initialisation, so the original's hyperparameters carry over: each
scale checked against the distribution bilm-tf draws from (training.py, TF's LSTMCell defaults)."""

import math

import pytest
import torch

from spacy_elmo import BiLM, preset
from spacy_elmo.elmo.nn.options import ElmoOptions


def options(activation: str) -> ElmoOptions:
    data = preset("small").to_dict()
    data["char_cnn"]["activation"] = activation
    data["lstm"]["dim"] = 256
    return ElmoOptions.from_dict(data)


def assert_uniform(values: torch.Tensor, bound: float) -> None:
    assert values.abs().max() <= bound
    # U(-b, b) has variance b^2 / 3; its sample std is within a few percent at these sizes.
    assert values.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.05)


def test_relu_filters_uniform_005_and_char_embedding_uniform_1():
    torch.manual_seed(0)
    encoder = BiLM(options("relu")).char_encoder
    assert_uniform(torch.cat([c.weight.flatten() for c in encoder.convs]), 0.05)
    assert_uniform(encoder.char_embed.weight[1:].flatten(), 1.0)
    assert encoder.char_embed.weight[0].abs().sum() == 0


def test_tanh_filters_normal_with_width_scaled_std():
    torch.manual_seed(0)
    bilm = BiLM(options("tanh"))
    dim = bilm.options.char_cnn.embedding_dim
    for conv, (width, _) in zip(bilm.char_encoder.convs, bilm.options.char_cnn.filters):
        expected = math.sqrt(1.0 / (width * dim))
        assert conv.weight.std().item() == pytest.approx(expected, rel=0.15 if conv.weight.numel() < 2000 else 0.05)


def test_highway_and_projection_scaled_normals_with_carry_bias():
    torch.manual_seed(0)
    encoder = BiLM(options("relu")).char_encoder
    n_filters = encoder.options.n_filters
    for highway in encoder.highways:
        assert highway.carry.weight.std().item() == pytest.approx(math.sqrt(1 / n_filters), rel=0.05)
        assert (highway.carry.bias == -2).all() and (highway.transform.bias == 0).all()
    assert encoder.projection.weight.std().item() == pytest.approx(math.sqrt(1 / n_filters), rel=0.05)


def test_lstm_kernels_glorot_uniform_as_tf_lstmcell():
    torch.manual_seed(0)
    bilm = BiLM(options("relu"))
    for layer in bilm.lstm.layers:
        kernel = math.sqrt(6 / (layer.input_dim + layer.projection_dim + 4 * layer.cell_dim))
        assert_uniform(torch.cat([layer.input_weight.flatten(), layer.state_weight.flatten()]), kernel)
        assert_uniform(layer.projection_weight.flatten(), math.sqrt(6 / (layer.cell_dim + layer.projection_dim)))
        assert (layer.input_bias == 0).all()
