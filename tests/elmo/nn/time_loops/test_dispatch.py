"""Which time loop a call runs (elmo/nn/time_loops/dispatch.py): "auto" is the device's measured default, a named loop
runs as asked, and a call the wavefront cannot run (one direction, dropout while training) falls back to
the step loop with its exact results."""

import numpy as np
import torch

from spacy_elmo.elmo.nn.lstm import BiLSTMStack, run_directions
from spacy_elmo.elmo.nn.time_loops import wavefront
from spacy_elmo.elmo.nn.time_loops.dispatch import DEFAULTS, resolve, stack_loop
from tests.elmo.nn.time_loops.test_wavefront import LENGTHS, inputs, random_stack


def test_auto_is_the_devices_default_and_a_named_loop_is_kept():
    cpu = torch.device("cpu")
    assert resolve("auto", cpu) == DEFAULTS["cpu"]
    assert resolve("wavefront", cpu) == "wavefront" and resolve("captured", cpu) == "captured"
    assert stack_loop("step", cpu) is None
    assert (stack_loop("auto", cpu) is None) == (DEFAULTS["cpu"] == "step")
    assert stack_loop("wavefront", cpu) is not None


def test_a_named_wavefront_runs_the_wavefront_with_the_step_loops_results(monkeypatch):
    calls = []
    run = wavefront.run
    monkeypatch.setattr(wavefront, "run", lambda *args: calls.append(1) or run(*args))
    stack = random_stack(2)
    x, _ = inputs(stack)
    lengths = (np.array(LENGTHS), np.array(LENGTHS))  # the same lengths: both directions in lockstep
    with torch.no_grad():
        got = run_directions(stack, (x[0], x[1]), lengths, loop=stack_loop("wavefront", x.device))
        assert calls == [1]
        expected = run_directions(stack, (x[0], x[1]), lengths)
    assert calls == [1]
    for (f, b), (ef, eb) in zip(got[0], expected[0]):
        assert torch.allclose(f, ef, atol=1e-5, rtol=0) and torch.allclose(b, eb, atol=1e-5, rtol=0)


def test_one_direction_and_dropout_fall_back_to_the_step_loop():
    stack = random_stack(2)
    x, states = inputs(stack)
    assert not wavefront.supports(stack, slice(1, 2))
    assert not wavefront.supports(BiLSTMStack(2, 5, 7, 4, None, None, True, dropout=0.1).train(), slice(None))
    loop = stack_loop("wavefront", x.device)
    with torch.no_grad():
        got = run_directions(stack, (x[0], x[1]), (np.array(LENGTHS), np.array(LENGTHS[::-1])), loop=loop)
        expected = run_directions(stack, (x[0], x[1]), (np.array(LENGTHS), np.array(LENGTHS[::-1])))
    for (f, b), (ef, eb) in zip(got[0], expected[0]):
        assert torch.equal(f, ef) and torch.equal(b, eb)
