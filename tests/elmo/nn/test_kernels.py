"""The CPU kernel choice (elmo/nn/kernels.py): both kernels give the plain product, packed copies follow
their weights, autograd keeps the plain product, the choice is measured once per shape."""

import copy

import pytest
import torch

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.nn import kernels
from spacy_elmo.elmo.nn.kernels import (
    HEIGHTS_PER_OCTAVE,
    KERNEL_VARIABLE,
    PackedWeights,
    batched_product,
    linear,
    product_height,
)
from spacy_elmo.elmo.nn.torch_compat import onednn_pack

needs_onednn = pytest.mark.skipif(not kernels.onednn_available(), reason="this torch build has no oneDNN")


@pytest.fixture
def weights():
    torch.manual_seed(0)
    return torch.randn(2, 24, 40), torch.randn(2, 40), torch.randn(2, 7, 40), torch.randn(2, 7, 24)


@needs_onednn
@pytest.mark.parametrize("kernel", [kernels.MKL, kernels.ONEDNN, kernels.AUTO])
@pytest.mark.parametrize("term", ["none", "bias", "add"])
@pytest.mark.parametrize("directions", [slice(None), slice(1, 2)])
def test_batched_product_equals_the_plain_product(monkeypatch, weights, kernel, term, directions):
    monkeypatch.setenv(KERNEL_VARIABLE, kernel)
    weight, bias, add, x = weights
    x, bias, add = x[directions], bias[directions], add[directions]
    expected = torch.bmm(x, weight[directions])
    if term == "bias":
        expected = expected + bias.unsqueeze(1)
    if term == "add":
        expected = expected + add
    with torch.no_grad():
        got = batched_product(
            x,
            weight,
            directions,
            PackedWeights(),
            bias=bias if term == "bias" else None,
            add=add if term == "add" else None,
        )
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


@needs_onednn
@pytest.mark.parametrize("kernel", [kernels.MKL, kernels.ONEDNN])
def test_linear_equals_nn_linear(monkeypatch, kernel):
    monkeypatch.setenv(KERNEL_VARIABLE, kernel)
    torch.manual_seed(1)
    layer = torch.nn.Linear(16, 12)
    x = torch.randn(9, 16)
    with torch.no_grad():
        torch.testing.assert_close(linear(x, layer.weight, layer.bias, PackedWeights()), layer(x))


@pytest.fixture
def onednn_product(monkeypatch, weights):
    """(weight, x, an empty packed-weights cache) with oneDNN pinned."""
    monkeypatch.setenv(KERNEL_VARIABLE, kernels.ONEDNN)
    weight, _, _, x = weights
    return weight, x, PackedWeights()


@needs_onednn
def test_packed_copy_follows_in_place_updates(onednn_product):
    weight, x, cache = onednn_product
    with torch.no_grad():
        before = batched_product(x, weight, slice(None), cache)
        weight.mul_(2.0)  # an optimizer step or load_state_dict bumps the version counter the same way
        after = batched_product(x, weight, slice(None), cache)
    torch.testing.assert_close(after, 2.0 * before)


def test_with_autograd_the_plain_product_runs_and_gives_gradients(monkeypatch, weights):
    monkeypatch.setenv(KERNEL_VARIABLE, kernels.ONEDNN)
    weight, _, _, x = weights
    weight = weight.clone().requires_grad_(True)
    cache = PackedWeights()
    batched_product(x, weight, slice(None), cache).sum().backward()
    assert cache._key is None, "no packed copy is made for a product that needs a gradient"
    torch.testing.assert_close(weight.grad, x.sum(dim=1).unsqueeze(-1).expand_as(weight))


def test_the_choice_is_measured_once_per_shape(monkeypatch):
    monkeypatch.delenv(KERNEL_VARIABLE, raising=False)
    calls = {"plain": 0, "packed": 0}

    def run(name):
        def product():
            calls[name] += 1
            return torch.zeros(1)

        return product

    kernels.clear_choices()
    key = ("test", 4, 3, 2, 1)
    first = kernels.choose(key, run("plain"), run("packed"))
    assert first in (kernels.MKL, kernels.ONEDNN) and calls["plain"] > 1 and calls["packed"] > 1
    measured = dict(calls)
    assert kernels.choose(key, run("plain"), run("packed")) == first
    assert calls == measured
    kernels.clear_choices()


def test_row_bucket():
    assert [kernels.row_bucket(n) for n in (1, 2, 3, 4, 5, 32, 33)] == [1, 2, 4, 4, 8, 32, 64]


def test_a_bad_pinned_kernel_is_refused(monkeypatch):
    monkeypatch.setenv(KERNEL_VARIABLE, "openblas")
    with pytest.raises(ElmoError, match=KERNEL_VARIABLE):
        kernels.pinned_kernel()


@needs_onednn
def test_a_copied_cache_starts_empty(onednn_product):
    weight, x, cache = onednn_product
    with torch.no_grad():
        batched_product(x, weight, slice(None), cache)
    assert cache._key is not None
    assert copy.deepcopy(cache)._key is None


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
    pointwise = kernels.onednn_linear

    def recording(x, packed, bias):
        seen.append(x.shape[0])
        return pointwise(x, packed, bias)

    monkeypatch.setattr(kernels, "onednn_linear", recording)
    torch.manual_seed(0)
    layer = torch.nn.Linear(24, 40)
    weight = torch.randn(2, 24, 40)
    packed = onednn_pack(layer.weight.detach())
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
