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
from spacy_elmo.elmo.nn.fast import int8
from spacy_elmo.elmo.nn.fast.fast_bilm import FastModeError, make_fast
from spacy_elmo.elmo.nn.fast.int8 import Int8Linear
from spacy_elmo.elmo.nn.kernels import KERNEL_VARIABLE
from spacy_elmo.elmo.nn.torch_compat import onednn_int8_available

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


@pytest.fixture(params=["mkl", "onednn"])
def int8_kernel(request, monkeypatch):
    """Each int8 kernel pinned: fbgemm's ("mkl", the plain one) and oneDNN's (on any x86 CPU, pretending
    it has int8 units as the bf16 tests pretend bf16 units)."""
    if request.param == "onednn":
        if not onednn_int8_available():
            pytest.skip("this torch build has no oneDNN int8 product")
        monkeypatch.setattr(int8, "has_int8_units", lambda: True)
    monkeypatch.setenv(KERNEL_VARIABLE, request.param)
    return request.param


def test_int8_linear_is_close_to_the_float_product(int8_kernel):
    torch.manual_seed(0)
    weight, bias = torch.randn(64, 256) / 8, torch.randn(256)
    x = torch.randn(20, 64).clamp(-3, 3)  # 20 rows: padded to oneDNN's product height
    exact = x @ weight + bias
    linear = Int8Linear(weight, bias)
    if int8_kernel == "onednn":
        assert linear._onednn is not None
    got = linear(x)
    error = (got - exact).abs().max()
    assert 0 < error < 0.02 * exact.abs().max()
    torch.testing.assert_close(linear(x[:3]), got[:3], rtol=0, atol=0.02 * exact.abs().max().item())


def test_the_two_int8_kernels_round_differently_and_both_stay_close(monkeypatch):
    if not onednn_int8_available():
        pytest.skip("this torch build has no oneDNN int8 product")
    monkeypatch.setattr(int8, "has_int8_units", lambda: True)
    torch.manual_seed(0)
    weight, x = torch.randn(64, 256) / 8, torch.randn(8, 64)
    linear = Int8Linear(weight)
    results = {}
    for kernel in ("mkl", "onednn"):
        monkeypatch.setenv(KERNEL_VARIABLE, kernel)
        results[kernel] = linear(x)
    assert not torch.equal(results["mkl"], results["onednn"])
    exact = x @ weight
    assert (results["onednn"] - exact).abs().max() < (results["mkl"] - exact).abs().max()  # the full uint8 range


def test_a_cpu_without_int8_units_keeps_fbgemm_only(monkeypatch):
    monkeypatch.setattr(int8, "has_int8_units", lambda: False)
    assert Int8Linear(torch.randn(8, 16))._onednn is None


@pytest.mark.parametrize("batch_size", [1, 4])
def test_int8_close_to_exact(fixture_bilm, batch_size, int8_kernel):
    exact = fixture_bilm.embed(SENTENCES)
    fast = make_fast(fixture_bilm, "int8").embed(SENTENCES, batch_size=batch_size)
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
