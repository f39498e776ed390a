"""The wavefront time loop against the step loop (random stacks of 1-3 layers, ragged rows, carried
states, gradients, int8 layers) and against the TF fixtures, stateless, warm and stateful.

The TF fixtures run the compiled elementwise step, the others the same functions eagerly
(conftest.py). Tolerance: 1e-5 against the step loop (the same arithmetic, the sums in another
order); the fixtures' own 1e-6 (tests/reference/test_bilm_tf.py)."""

import numpy as np
import pytest
import torch

from spacy_elmo.elmo.nn.errors import InputError
from spacy_elmo.elmo.nn.fast.fast_bilm import make_fast
from spacy_elmo.elmo.nn.lstm import BiLSTMStack
from spacy_elmo.elmo.nn.run_options import RunOptions
from spacy_elmo.elmo.nn.time_loops import wavefront
from tests.reference.test_bilm_tf import SETS, _load
from tests.support.tolerance import assert_matches_reference

TOLERANCE = 1e-5
LENGTHS = [9, 9, 6, 3, 1, 0]


def random_stack(n_layers: int, input_dim: int = 5, seed: int = 0) -> BiLSTMStack:
    """Cell 7, projection 4, both clips tight enough to bite, skip connections, large weights."""
    torch.manual_seed(seed)
    stack = BiLSTMStack(n_layers, input_dim, 7, 4, 0.6, 0.5, use_skip_connections=True)
    with torch.no_grad():
        for p in stack.parameters():
            p.normal_(0, 0.8)
    return stack


def inputs(stack: BiLSTMStack, input_dim: int = 5):
    x = torch.randn(2, len(LENGTHS), max(LENGTHS), input_dim)
    states = [(torch.randn(2, len(LENGTHS), 4) * 0.3, torch.randn(2, len(LENGTHS), 7) * 0.3) for _ in stack.layers]
    return x, states


def assert_close(got, expected, tolerance=TOLERANCE):
    (outputs, finals), (ref_outputs, ref_finals) = got, expected
    assert len(outputs) == len(ref_outputs)
    for out, ref in zip(outputs, ref_outputs):
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=tolerance, rtol=0)
    for (h, c), (ref_h, ref_c) in zip(finals, ref_finals):
        np.testing.assert_allclose(h.detach().numpy(), ref_h.detach().numpy(), atol=tolerance, rtol=0)
        np.testing.assert_allclose(c.detach().numpy(), ref_c.detach().numpy(), atol=tolerance, rtol=0)


@pytest.mark.parametrize("input_dim", [4, 5, 3])
@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_the_wavefront_gives_the_step_loops_outputs_and_states(n_layers, input_dim):
    """Any number of layers (layer k k steps behind), inputs wider, as wide and narrower than the
    projection, ragged rows down to empty ones, carried states; outputs zero past each row's end."""
    stack = random_stack(n_layers, input_dim)
    x, states = inputs(stack, input_dim)
    with torch.no_grad():
        expected = stack(x, LENGTHS, states)
        got = wavefront.run(stack, x, LENGTHS, states)
    assert_close(got, expected)
    clipped = sum(int((out.abs() == 0.5).sum()) for out in expected[0][:1])
    assert clipped > 0, "the test must exercise the projection clip"
    for k, out in enumerate(got[0]):
        for row, n in enumerate(LENGTHS):
            assert (out[:, row, n:] == 0).all(), (k, row)


def test_the_wavefront_without_shrinking_rows_gives_the_same():
    """Fixed rows and steps, lengths read from the device only (what a CUDA graph captures)."""
    stack = random_stack(2)
    x, states = inputs(stack)
    with torch.no_grad():
        expected = stack(x, LENGTHS, states)
        got = wavefront.run(stack, x, [], states, device_lengths=torch.tensor(LENGTHS), shrink=False)
    assert_close(got, expected)


def test_the_wavefronts_gradients_are_the_step_loops():
    stack = random_stack(2)
    x, states = inputs(stack)
    x.requires_grad_(True)
    grads = []
    for run in (lambda: stack(x, LENGTHS, states), lambda: wavefront.run(stack, x, LENGTHS, states)):
        stack.zero_grad()
        x.grad = None
        outputs, finals = run()
        (sum(o.square().sum() for o in outputs) + sum(h.sum() + c.sum() for h, c in finals)).backward()
        grads.append([x.grad.clone()] + [p.grad.clone() for p in stack.parameters()])
    for got, expected in zip(*grads):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-4, rtol=1e-5)


def test_changed_weights_are_stacked_again():
    stack = random_stack(2)
    x, states = inputs(stack)
    with torch.no_grad():
        wavefront.run(stack, x, LENGTHS, states)
        stack.layers[1].state_weight.mul_(0.5)
        assert_close(wavefront.run(stack, x, LENGTHS, states), stack(x, LENGTHS, states))


def test_int8_layers_keep_their_own_products_in_the_wavefront(fixture_bilm):
    """The int8 copy's products are its own in the wavefront too: near the exact model as int8 is
    (tests/test_fast.py's bound), and not the exact model's numbers."""
    fast = make_fast(fixture_bilm, "int8")
    sentences = [["The", "cat", "sat", "."], ["Hello", "!"], ["Colorless", "green", "ideas", "sleep", "furiously"]]
    exact = fixture_bilm.embed(sentences)
    got = fast.embed(sentences, run=RunOptions(time_loop="wavefront"))
    steps = fast.embed(sentences, run=RunOptions(time_loop="step"))
    for g, s, e in zip(got, steps, exact):
        assert np.abs(g - e).max() <= 0.25
        assert np.abs(g - s).max() <= 0.25
        assert np.abs(g - e).max() > 1e-5


@pytest.mark.compiled
@pytest.mark.parametrize("name", list(SETS))
@pytest.mark.parametrize("time_loop", ["wavefront", "captured"])
def test_the_tf_fixtures_hold_stateful_over_ten_batches(name, time_loop):
    bilm, sentences, references = _load(name)
    run = RunOptions(time_loop=time_loop)
    for i in range(10):
        batch = [sentences[k][i].split() for k in range(3)]
        outputs = bilm.embed(batch, stateful=True, batch_size=3, run=run)
        for k in range(3):
            assert_matches_reference(outputs[k][-1], references[k][i], err_msg=f"{i} {k}")


@pytest.mark.compiled
@pytest.mark.parametrize("time_loop", ["wavefront", "captured"])
def test_stateless_and_warm_start_give_the_step_loops(time_loop):
    bilm, stored, _ = _load("elmo-bilm-tf")
    sentences = [stored[k][i].split() for k in range(3) for i in range(4)]
    for warm in (False, True):
        if warm:
            bilm.set_warm_start()
        expected = bilm.embed(sentences, batch_size=2, run=RunOptions(time_loop="step"))
        got = bilm.embed(sentences, batch_size=2, run=RunOptions(time_loop=time_loop))
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, atol=TOLERANCE, rtol=0)


def test_an_unknown_time_loop_is_refused():
    with pytest.raises(InputError, match="unknown time_loop 'fast'.*wavefront"):
        RunOptions(time_loop="fast")
