"""What `embed` keeps of a sentence (elmo/nn/layer_choice.py): all layers or one mix by the pooling-weights
rule, per token or pooled by the mean; bad choices named with the fix."""

import numpy as np
import pytest
import torch

from spacy_elmo.elmo.errors import InputError
from spacy_elmo.elmo.nn.layer_choice import OutputChoice, layers_from_text

LAYERS = torch.arange(3 * 2 * 4 * 5, dtype=torch.float32).reshape(3, 2, 4, 5)  # [L+1, batch, n, 2P]
MASK = torch.tensor([[True, True, True, True], [True, True, False, False]])


def _reduced(choice):
    padded = LAYERS * MASK.unsqueeze(0).unsqueeze(-1)
    weights = choice.weights(3)
    return choice.reduce(padded, MASK, None if weights is None else torch.from_numpy(weights)).numpy(), padded.numpy()


@pytest.mark.parametrize(
    "layers,expected",
    [("top", [0.0, 0.0, 1.0]), ("average", [1 / 3] * 3), ((0.2, 0.3, 0.5), [0.2, 0.3, 0.5])],
)
def test_a_mix_weighs_the_layers_per_token(layers, expected):
    choice = OutputChoice(layers)
    reduced, padded = _reduced(choice)
    row = choice.row(reduced, 1, 2)
    assert row.shape == choice.shape(3, 2, 5) == (2, 5)
    np.testing.assert_allclose(row, np.einsum("l,lnd->nd", expected, padded[:, 1, :2]), rtol=1e-6)


def test_all_layers_are_kept_and_mean_pools_over_the_real_tokens_only():
    everything = OutputChoice()
    reduced, padded = _reduced(everything)
    np.testing.assert_array_equal(everything.row(reduced, 1, 2), padded[:, 1, :2])
    pooled = OutputChoice("all", "mean")
    reduced, _ = _reduced(pooled)
    assert pooled.row(reduced, 1, 2).shape == pooled.shape(3, 2, 5) == (3, 5)
    np.testing.assert_allclose(pooled.row(reduced, 1, 2), padded[:, 1, :2].mean(axis=1), rtol=1e-6)
    top_mean = OutputChoice("top", "mean")
    reduced, _ = _reduced(top_mean)
    np.testing.assert_allclose(top_mean.row(reduced, 0, 4), padded[2, 0].mean(axis=0), rtol=1e-6)


def test_an_empty_sentence_pools_to_zeros():
    choice = OutputChoice("average", "mean")
    empty = choice.reduce(torch.zeros(3, 1, 0, 5), torch.zeros(1, 0, dtype=torch.bool), torch.ones(3) / 3)
    np.testing.assert_array_equal(empty.numpy(), np.zeros((1, 5)))


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: OutputChoice("bottom"), "'bottom' is not one of all, top, average"),
        (lambda: OutputChoice([]), "non-empty list of layer weights"),
        (lambda: OutputChoice("all", "max"), "pool 'max' is not one of mean"),
        (lambda: OutputChoice((0.5, 0.5)).weights(3), "2 weights but the biLM has 3 layers"),
        (lambda: layers_from_text("0.2,x"), "--layers '0.2,x' is not one of all, top, average"),
    ],
)
def test_bad_choices_are_named(make, message):
    with pytest.raises(InputError, match=message):
        make()


def test_layers_from_text_reads_shorthands_and_weights():
    assert layers_from_text("top") == "top"
    assert layers_from_text("0.2,0.3,0.5") == [0.2, 0.3, 0.5]
    assert OutputChoice([1, 0, 0]).layers == (1.0, 0.0, 0.0)
