"""The per-shape state of the CPU kernels (nn/kernels.py) is bounded: remembered choices, and the product
heights oneDNN sees (one primitive each); padding a product's rows leaves every row's result unchanged."""

import pytest
import torch

from spacy_elmo.nn import kernels
from spacy_elmo.nn.kernels import (
    HEIGHTS_PER_OCTAVE,
    KERNEL_VARIABLE,
    PackedWeights,
    batched_product,
    linear,
    product_height,
)

needs_onednn = pytest.mark.skipif(not kernels.onednn_available(), reason="this torch build has no oneDNN")


def test_product_heights_are_few_per_octave_and_add_at_most_an_eighth():
    heights = [product_height(rows) for rows in range(1, 2**17 + 1)]
    assert all(h >= rows and h <= rows * 9 / 8 for rows, h in zip(range(1, 2**17 + 1), heights))
    assert heights[: 2 * HEIGHTS_PER_OCTAVE] == list(range(1, 2 * HEIGHTS_PER_OCTAVE + 1))
    for octave in range(5, 18):
        in_octave = {h for h in heights if 2 ** (octave - 1) < h <= 2**octave}
        assert len(in_octave) <= HEIGHTS_PER_OCTAVE
    assert len(set(heights)) <= 2 * HEIGHTS_PER_OCTAVE + HEIGHTS_PER_OCTAVE * 13


def test_remembered_choices_are_bounded(monkeypatch):
    monkeypatch.delenv(KERNEL_VARIABLE, raising=False)
    monkeypatch.setattr(kernels, "MAX_CHOICES", 4)
    monkeypatch.setattr(kernels, "_measure", lambda plain, packed: kernels.MKL)
    kernels.clear_choices()
    try:
        for rows in range(20):
            kernels.choose(("linear", rows, 8, 8, 1), lambda: torch.zeros(1), lambda: torch.zeros(1))
            assert len(kernels._choices) <= 4
    finally:
        kernels.clear_choices()


@needs_onednn
def test_onednn_sees_only_product_heights_and_each_row_is_unchanged(monkeypatch):
    monkeypatch.setenv(KERNEL_VARIABLE, kernels.ONEDNN)
    seen = []
    pointwise = kernels._pointwise

    def recording(x, packed, bias):
        seen.append(x.shape[0])
        return pointwise(x, packed, bias)

    monkeypatch.setattr(kernels, "_pointwise", recording)
    torch.manual_seed(0)
    layer = torch.nn.Linear(24, 40)
    weight = torch.randn(2, 24, 40)
    packed = torch.ops.mkldnn._reorder_linear_weight(layer.weight.detach(), None)
    for rows in (1, 17, 19, 33, 100, 515):
        x = torch.randn(rows, 24)
        with torch.no_grad():
            got = linear(x, layer.weight, layer.bias, PackedWeights())
            unpadded = pointwise(x, packed, layer.bias.detach())
            assert torch.equal(got, unpadded), f"padding to {product_height(rows)} rows changed the result"
            both = batched_product(torch.randn(2, rows, 24), weight, slice(None), PackedWeights())
        assert both.shape == (2, rows, 40) and both.is_contiguous()
    assert seen and all(h == product_height(h) for h in seen)
    assert {19, 33, 100, 515}.isdisjoint(seen)
