"""The "bf16" fast mode (elmo/nn/fast/bf16.py) on the fixture model: close to the exact vectors and not
equal to them, through `load_bilm` and through the component, on the CPU's packed oneDNN path (the CPU
pretended to have bf16 units where it has none: oneDNN computes them there too, slowly) and on the
one-`bmm` path GPUs take; the weights packed once; a CPU without bf16 units refused, naming the flags.

Tolerance: bf16 rounds each product's inputs to 8 bits of mantissa; on the fixture model's top layer
that measures max |d| 0.007 and a worst cosine of 0.999996 (docs/fast_modes.md); the tests allow 0.05
and 0.9999."""

import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.elmo.nn import kernels
from spacy_elmo.elmo.nn.char_encoder import KernelLinear
from spacy_elmo.elmo.nn.fast import bf16
from spacy_elmo.elmo.nn.fast.bf16 import Bf16BiLSTMLayer, Bf16Linear
from spacy_elmo.elmo.nn.fast.fast_bilm import FastBiLM, FastModeUnavailable, make_fast
from spacy_elmo.elmo.nn.run_options import RunOptions
from tests.elmo.nn.fast.test_int8 import SENTENCES
from tests.pipeline.test_component import MONEY, _nlp

MAX_ABS = 0.05
MIN_COSINE = 0.9999


@pytest.fixture(autouse=True)
def bf16_units(monkeypatch):
    """Every test here runs the bf16 mode whatever the CPU (tests of the refusal say otherwise)."""
    monkeypatch.setattr(bf16, "has_bf16_units", lambda: True)


def assert_near_and_not_equal(exact: np.ndarray, fast: np.ndarray) -> None:
    cosine = (exact * fast).sum(-1) / (np.linalg.norm(exact, axis=-1) * np.linalg.norm(fast, axis=-1) + 1e-12)
    assert np.abs(exact - fast).max() < MAX_ABS
    assert cosine[np.linalg.norm(exact, axis=-1) > 0].min() > MIN_COSINE
    assert not np.allclose(exact, fast, atol=1e-5, rtol=0)


@pytest.mark.parametrize("time_loop", ["step", "wavefront", "captured"])
def test_bf16_is_close_to_exact_in_every_time_loop(fixture_bilm, time_loop):
    fast = make_fast(fixture_bilm, "bf16")
    assert all(isinstance(layer, Bf16BiLSTMLayer) for layer in fast.lstm.layers)
    exact = fixture_bilm.embed(SENTENCES)
    got = fast.embed(SENTENCES, run=RunOptions(time_loop=time_loop))
    for layer in (0, -1):  # the char-CNN's highway and projection products are bf16 too
        assert_near_and_not_equal(np.concatenate([e[layer] for e in exact]), np.concatenate([g[layer] for g in got]))


def test_bf16_products_are_independent_of_the_fp32_flags(fixture_bilm):
    """An explicit cast, not a flag: the same numbers whatever torch's matmul precision says."""
    fast = make_fast(fixture_bilm, "bf16")
    before = torch.get_float32_matmul_precision()
    reference = fast.embed(SENTENCES)
    try:
        torch.set_float32_matmul_precision("medium")
        again = fast.embed(SENTENCES)
    finally:
        torch.set_float32_matmul_precision(before)
    for r, a in zip(reference, again):
        np.testing.assert_array_equal(a, r)


def test_load_bilm_gives_the_fast_copy(fixture_paths, fixture_bilm):
    fast = load_bilm(*fixture_paths, fast_mode="bf16")
    assert isinstance(fast, FastBiLM) and fast.mode == "bf16"
    for f, m in zip(fast.embed(SENTENCES), make_fast(fixture_bilm, "bf16").embed(SENTENCES)):
        np.testing.assert_array_equal(f, m)
    assert not isinstance(load_bilm(*fixture_paths), FastBiLM)


def test_the_component_runs_bf16_when_asked(fixture_paths):
    exact = _nlp(fixture_paths)(MONEY)._.elmo["layers"]
    fast = _nlp(fixture_paths, model={"fast_mode": "bf16"})(MONEY)._.elmo["layers"]
    assert_near_and_not_equal(exact[2], fast[2])


def test_the_cpu_and_the_gpu_products_agree(fixture_bilm, monkeypatch):
    """The packed oneDNN products (CPU) and one bf16 `bmm` per product (the path GPUs take, here forced
    on the CPU) round the same inputs: equally close to exact, within bf16 rounding of each other."""
    packed = make_fast(fixture_bilm, "bf16").embed(SENTENCES)
    monkeypatch.setattr(bf16, "onednn_linear_available", lambda: False)
    plain = make_fast(fixture_bilm, "bf16").embed(SENTENCES)
    exact = fixture_bilm.embed(SENTENCES)
    for got in (packed, plain):
        assert_near_and_not_equal(np.concatenate([e[-1] for e in exact]), np.concatenate([g[-1] for g in got]))
    np.testing.assert_allclose(
        np.concatenate([p[-1] for p in packed]), np.concatenate([g[-1] for g in plain]), atol=0.02
    )


def test_the_weights_are_packed_once_not_per_step(fixture_bilm, monkeypatch):
    packs = []
    pack = kernels.onednn_pack
    # Only the bf16 weights (the char-CNN's fp32 convolutions are not packed products).
    monkeypatch.setattr(kernels, "onednn_pack", lambda w: (w.dtype == torch.bfloat16 and packs.append(w)) or pack(w))
    fast = make_fast(fixture_bilm, "bf16")
    fast.embed(SENTENCES)
    encoder = fast.char_encoder
    char_products = 2 * len(encoder.highways) + (encoder.projection is not None)
    per_model = 3 * 2 * len(fast.lstm.layers) + char_products  # LSTM: three products, two directions, every layer
    assert len(packs) == per_model
    fast.embed([["Many", "more", "steps", "than", "before", "in", "this", "one", "sentence", "."]])
    assert len(packs) == per_model


def test_a_cpu_without_bf16_units_is_refused_naming_the_flags(fixture_bilm, monkeypatch):
    monkeypatch.setattr(bf16, "has_bf16_units", lambda: False)
    with pytest.raises(FastModeUnavailable, match="no bf16 units .no amx_bf16 / avx512_bf16 flag.*'int8'"):
        make_fast(fixture_bilm, "bf16")


def test_the_component_runs_exact_on_a_cpu_without_bf16_units_and_says_so_once(fixture_paths, monkeypatch):
    monkeypatch.setattr(bf16, "has_bf16_units", lambda: False)
    exact = _nlp(fixture_paths)(MONEY)._.elmo["layers"]
    nlp = _nlp(fixture_paths, model={"fast_mode": "bf16"})
    with pytest.warns(UserWarning, match="fast_mode 'bf16' is not used: .*avx512_bf16.*exact biLM instead") as caught:
        first = nlp(MONEY)._.elmo["layers"]
        second = nlp(MONEY)._.elmo["layers"]
    assert len([w for w in caught if "bf16" in str(w.message)]) == 1
    np.testing.assert_array_equal(first, exact)
    np.testing.assert_array_equal(second, exact)


@pytest.mark.parametrize(
    ("machine", "torch_says", "flags", "expected"),
    [
        ("x86_64", True, set(), True),
        ("x86_64", False, {"avx512_bf16"}, False),  # torch's check (the OS's registers too) decides
        ("x86_64", None, {"amx_bf16"}, True),  # a torch without the check: the flags
        ("x86_64", None, {"avx512f", "avx512_vnni"}, False),
        ("aarch64", False, {"asimd", "bf16"}, True),
        ("aarch64", False, {"asimd"}, False),
    ],
)
def test_bf16_units_are_found_from_torch_or_the_flags(monkeypatch, machine, torch_says, flags, expected):
    monkeypatch.undo()  # the real detection, fed each machine
    monkeypatch.setattr(bf16.platform, "machine", lambda: machine)
    monkeypatch.setattr(bf16, "cpu_bf16_units", lambda: torch_says)
    monkeypatch.setattr(bf16, "cpu_flags", lambda: frozenset(flags))
    assert bf16.has_bf16_units() is expected


def test_the_char_cnn_products_are_bf16_and_the_exact_model_keeps_its_own(fixture_bilm):
    fast = make_fast(fixture_bilm, "bf16")
    for encoder, kind in ((fast.char_encoder, Bf16Linear), (fixture_bilm.char_encoder, KernelLinear)):
        products = [encoder.projection, *(p for h in encoder.highways for p in (h.carry, h.transform))]
        assert all(type(product) is kind for product in products)
    words = ["bank", "river", "Zürich", "x"]
    assert_near_and_not_equal(fixture_bilm.embed_tokens(words), fast.embed_tokens(words))
