"""The int8 fast mode against the exact path on the tiny fixture model, and its refusals.

Tolerance: int8 keeps the exact model's arithmetic and clipping and differs by the rounding of its
matrix products only. On this model that measures max |d| 0.04 and mean cosine 0.9999 on the top layer;
the tests allow 0.25 and 0.999. Clipping moves this model's top layer by up to 0.87, so the int8 model
staying within 0.25 of the clipped exact model and not of the unclipped one shows it clips as exact does.
"""

import copy

import numpy as np
import pytest
import torch

from spacy_elmo import batch_to_ids
from spacy_elmo.elmo.nn.fast.fast_bilm import FastModeError, make_fast
from spacy_elmo.elmo.nn.fast.int8 import Int8Linear

MAX_ABS = 0.25
MIN_MEAN_COSINE = 0.999

SENTENCES = [
    ["The", "cat", "sat", "on", "the", "mat", "."],
    ["Hello", "!"],
    [],
    [
        "A",
        "much",
        "longer",
        "sentence",
        "with",
        "several",
        "words",
        "that",
        "are",
        "not",
        "all",
        "common",
        ",",
        "such",
        "as",
        "sesquipedalian",
        ".",
    ],
    ["Short", "one"],
    ["Colorless", "green", "ideas", "sleep", "furiously"],
]


@pytest.fixture(scope="module")
def int8_bilm(fixture_bilm):
    return make_fast(fixture_bilm, "int8")


@pytest.fixture(scope="module")
def unclipped_bilm(fixture_bilm):
    bilm = copy.deepcopy(fixture_bilm)
    for layer in bilm.lstm.layers:
        layer.cell_clip = layer.proj_clip = None
    return bilm


def _top(outputs):
    return np.concatenate([o[-1] for o in outputs])


def _assert_close(exact, fast):
    cosine = (exact * fast).sum(1) / (np.linalg.norm(exact, axis=1) * np.linalg.norm(fast, axis=1))
    assert np.abs(exact - fast).max() < MAX_ABS
    assert cosine.mean() > MIN_MEAN_COSINE


def test_int8_linear_is_close_to_the_float_product():
    torch.manual_seed(0)
    weight, bias = torch.randn(64, 256) / 8, torch.randn(256)
    x = torch.randn(5, 64).clamp(-3, 3)
    exact = x @ weight + bias
    error = (Int8Linear(weight, bias)(x) - exact).abs().max()
    assert 0 < error < 0.02 * exact.abs().max()


@pytest.mark.parametrize("batch_size", [1, 4])
def test_int8_close_to_exact(fixture_bilm, int8_bilm, batch_size):
    exact = fixture_bilm.embed(SENTENCES)
    fast = int8_bilm.embed(SENTENCES, batch_size=batch_size)
    assert [f.shape for f in fast] == [e.shape for e in exact]
    assert fast[2].shape == (fixture_bilm.n_layers, 0, fixture_bilm.output_dim)
    _assert_close(_top(exact), _top(fast))
    for e, f in zip(exact, fast):
        np.testing.assert_allclose(f[0], e[0], atol=1e-6)  # the char-CNN layer is the exact one


def test_int8_clips_as_exact_does(fixture_bilm, unclipped_bilm, int8_bilm):
    fast = _top(int8_bilm.embed(SENTENCES))
    assert np.abs(fast - _top(unclipped_bilm.embed(SENTENCES))).max() > MAX_ABS
    _assert_close(_top(unclipped_bilm.embed(SENTENCES)), _top(make_fast(unclipped_bilm, "int8").embed(SENTENCES)))


def test_int8_forward_on_char_ids(fixture_bilm, int8_bilm):
    char_ids = torch.from_numpy(batch_to_ids(SENTENCES))
    with torch.inference_mode():
        exact = fixture_bilm(char_ids)
        fast = int8_bilm(char_ids)
    assert torch.equal(fast.mask, exact.mask)
    mask = exact.mask.numpy()
    _assert_close(exact.layers[-1].numpy()[mask], fast.layers[-1].numpy()[mask])


def test_single_direction_is_refused(fixture_bilm, int8_bilm):
    x = torch.zeros(1, 1, 3, fixture_bilm.options.projection_dim)
    with pytest.raises(FastModeError, match="both directions together"):
        int8_bilm.lstm(x, [3], None, slice(1, 2))
