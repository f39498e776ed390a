"""The GPU candidates of docs/gpu.md (run_options.py) give the step loop's vectors on the CPU, through the
code a GPU runs: the compiled LSTM windows (stateless, warm, stateful, rows of several lengths, a
sentence longer than a window) and the reused host buffers. The window is cut to 3 steps here, so that
compiling stays short on a small machine; a GPU run uses the 20 of compiled_lstm.WINDOW."""

import numpy as np
import pytest
import torch

from spacy_elmo import BiLM, preset
from spacy_elmo.nn import compiled_lstm
from spacy_elmo.nn.errors import RunOptionsError
from spacy_elmo.nn.kernels import KERNEL_VARIABLE, MKL
from spacy_elmo.nn.run_options import RunOptions

TOLERANCE = 1e-5
SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."][: 2 + i % 6] for i in range(6)]


def tiny_bilm(weight_scale: float) -> BiLM:
    torch.manual_seed(0)
    bilm = BiLM(preset("tiny")).eval()
    with torch.no_grad():
        for p in bilm.lstm.parameters():
            p.mul_(weight_scale)
    return bilm


@pytest.fixture(autouse=True)
def short_window_and_one_kernel(monkeypatch) -> None:
    """Both paths' products through MKL, not through whichever kernel a timing picked (nn/kernels.py)."""
    monkeypatch.setattr(compiled_lstm, "WINDOW", 3)
    monkeypatch.setenv(KERNEL_VARIABLE, MKL)


def _assert_same(expected, actual) -> None:
    assert len(expected) == len(actual)
    for x, y in zip(expected, actual):
        np.testing.assert_allclose(y, x, atol=TOLERANCE, rtol=0)


@pytest.mark.slow
def test_the_compiled_lstm_and_pinned_copies_give_the_step_loops_vectors():
    bilm = tiny_bilm(3.0)  # large weights, so that both clips bite
    fast = RunOptions(lstm="compiled", host_copies="pinned")
    _assert_same(bilm.embed(SENTENCES, batch_size=4), bilm.embed(SENTENCES, batch_size=4, run=fast))
    bilm.set_warm_start()
    _assert_same(bilm.embed(SENTENCES, batch_size=4), bilm.embed(SENTENCES, batch_size=4, run=fast))


@pytest.mark.slow
def test_the_compiled_lstm_carries_states_as_the_step_loop():
    """The second call of each starts from the states the first left (the published weights' scale:
    larger ones make the carried states chaotic, every rounding difference grown past the tolerance)."""
    bilm = tiny_bilm(1.0)
    compiled = RunOptions(lstm="compiled")
    expected = [bilm.embed(SENTENCES, stateful=True, batch_size=4) for _ in range(2)]
    bilm.reset_states()
    actual = [bilm.embed(SENTENCES, stateful=True, batch_size=4, run=compiled) for _ in range(2)]
    _assert_same(sum(expected, []), sum(actual, []))


@pytest.mark.parametrize("batch_size", [1, 2])
def test_pinned_copies_give_every_batch_its_own_rows(batch_size):
    """Two buffers take turns: a batch's rows must not be overwritten by a later batch's copy, also where a
    sentence's rows are the whole buffer (one sentence a batch), which NumPy would hand out as a view."""
    bilm = tiny_bilm(1.0)
    pinned = RunOptions(host_copies="pinned")
    expected = bilm.embed(SENTENCES, batch_size=batch_size)
    _assert_same(expected, bilm.embed(SENTENCES, batch_size=batch_size, run=pinned))


@pytest.mark.parametrize("field, value", [("lstm", "fused"), ("host_copies", "mapped")])
def test_an_unknown_candidate_is_refused_with_the_choices(field, value):
    with pytest.raises(RunOptionsError, match="choose one of"):
        RunOptions(**{field: value})
