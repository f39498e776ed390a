"""The "bf16" fast mode (elmo/nn/fast/bf16.py) on the fixture model, on the CPU (bf16 products run there too):
close to the exact vectors and not equal to them, through `load_bilm` and through the component.

Tolerance: bf16 rounds each product's inputs to 8 bits of mantissa; on the fixture model's top layer
that measures max |d| 0.008 and a worst cosine of 0.999997 (docs/fast_modes.md); the tests allow 0.05
and 0.9999."""

import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.elmo.nn.fast.bf16 import Bf16BiLSTMLayer
from spacy_elmo.elmo.nn.fast.fast_bilm import FastBiLM, make_fast
from spacy_elmo.elmo.nn.run_options import RunOptions
from tests.elmo.nn.fast.test_int8 import SENTENCES
from tests.pipeline.test_component import MONEY, _nlp

MAX_ABS = 0.05
MIN_COSINE = 0.9999


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
    assert_near_and_not_equal(np.concatenate([e[-1] for e in exact]), np.concatenate([g[-1] for g in got]))
    for e, g in zip(exact, got):
        np.testing.assert_allclose(g[0], e[0], atol=1e-6)  # the char-CNN layer is the exact one


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
