"""make_fast's copy (spacy_elmo/elmo/nn/fast/fast_bilm.py): a snapshot of the exact model, its warm start
included, that refuses what a fast model cannot do (stateful runs, training, its own warm start) and
modes it does not know."""

import copy

import numpy as np
import pytest
import torch

from spacy_elmo.elmo.nn.fast.fast_bilm import FAST_MODES, FastModeError, make_fast
from tests.elmo.nn.fast.test_int8 import MAX_ABS, SENTENCES, _assert_close, _top


@pytest.fixture(scope="module")
def int8_bilm(fixture_bilm):
    return make_fast(fixture_bilm, "int8")


def test_int8_takes_the_exact_models_warm_start(fixture_bilm):
    bilm = copy.deepcopy(fixture_bilm)
    bilm.set_warm_start([["Some", "text", "read", "before", "."]])
    exact = _top(bilm.embed(SENTENCES))
    _assert_close(exact, _top(make_fast(bilm, "int8").embed(SENTENCES)))
    assert np.abs(exact - _top(fixture_bilm.embed(SENTENCES))).max() > MAX_ABS


def test_fast_model_is_a_snapshot(fixture_bilm):
    bilm = copy.deepcopy(fixture_bilm)
    fast = make_fast(bilm, "int8")
    before = fast.embed(SENTENCES[:2])
    with torch.no_grad():
        for p in bilm.parameters():
            p.add_(1.0)
    for b, a in zip(before, fast.embed(SENTENCES[:2])):
        np.testing.assert_array_equal(a, b)


def test_unknown_mode_is_refused(fixture_bilm):
    assert FAST_MODES == ("int8", "bf16")
    with pytest.raises(FastModeError, match="unknown fast_mode .fused.; choose one of int8, bf16, auto, or null"):
        make_fast(fixture_bilm, "fused")


def test_stateful_is_refused(int8_bilm):
    with pytest.raises(FastModeError, match="stateless only.*exact BiLM"):
        int8_bilm.embed(SENTENCES, stateful=True)


def test_training_is_refused(int8_bilm):
    with pytest.raises(FastModeError, match="cannot train.*make_fast"):
        int8_bilm.train()
    assert int8_bilm.eval() is int8_bilm
    assert not any(p.requires_grad for p in int8_bilm.parameters())


def test_warm_start_on_the_fast_model_is_refused(int8_bilm):
    with pytest.raises(FastModeError, match="on the exact BiLM"):
        int8_bilm.set_warm_start([["a"]])
