"""The captured time loop's CPU half: buckets, static buffers, padding and the bounded cache, run
eagerly through the code a GPU captures (the replay itself: tests/test_gpu.py)."""

import numpy as np
import torch

from spacy_elmo.elmo.nn.time_loops import captured
from spacy_elmo.elmo.nn.time_loops.captured import CapturedLoop, batch_bucket, length_bucket

from .test_wavefront import LENGTHS, assert_close, inputs, random_stack


def test_buckets_round_rows_to_powers_of_two_and_steps_to_multiples_of_sixteen():
    assert [batch_bucket(n) for n in (1, 2, 3, 5, 32, 33)] == [1, 2, 4, 8, 32, 64]
    assert [length_bucket(n) for n in (0, 1, 16, 17, 40)] == [16, 16, 16, 32, 48]


def test_padding_to_the_bucket_changes_nothing():
    """6 rows of 9 steps run in an 8 x 16 bucket: padded rows (length 0) and steps (past every row's end)
    are masked, so the real rows' outputs and final states are the step loop's; the bucket's padding
    stays zero in the outputs and at the initial (zero) state."""
    stack = random_stack(3)
    x, states = inputs(stack)
    loop = CapturedLoop()
    with torch.no_grad():
        got = loop(stack, x, LENGTHS, states)
        expected = stack(x, LENGTHS, states)
    assert_close(got, expected)
    (bucket,) = loop.buckets._table.values()
    assert bucket.x.shape[1:3] == (8, 16)
    for out in bucket.outputs:
        assert (out[:, len(LENGTHS) :] == 0).all() and (out[:, :, max(LENGTHS) :] == 0).all()
    for h, c in bucket.finals:
        assert (h[:, len(LENGTHS) :] == 0).all() and (c[:, len(LENGTHS) :] == 0).all()


def test_a_bucket_reused_for_a_smaller_batch_keeps_no_trace_of_the_larger():
    stack = random_stack(2)
    x, states = inputs(stack)
    loop = CapturedLoop()
    with torch.no_grad():
        loop(stack, x, LENGTHS, states)
        small = [n for n in LENGTHS[3:]]
        got = loop(stack, x[:, 3:, :3], small, [(h[:, 3:], c[:, 3:]) for h, c in states])
        expected = stack(x[:, 3:, :3], small, [(h[:, 3:], c[:, 3:]) for h, c in states])
    assert len(loop.buckets) == 2  # 6 rows and 3 rows: buckets 8 and 4
    assert_close(got, expected)


def test_the_cache_of_buckets_is_bounded_and_reuses_a_bucket():
    stack = random_stack(1)
    loop = CapturedLoop(capacity=2)
    with torch.no_grad():
        for rows in (1, 2, 4, 4, 3):
            x = torch.randn(2, rows, 5, 5)
            loop(stack, x, [5] * rows, stack.zero_states(rows, x))
    assert len(loop.buckets) == 2
    assert (loop.buckets.hits, loop.buckets.misses) == (2, 3)


def test_changed_weights_are_not_served_from_an_old_bucket():
    stack = random_stack(2)
    x, states = inputs(stack)
    with torch.no_grad():
        captured.run(stack, x, LENGTHS, states)
        stack.layers[0].projection_weight.mul_(-1.0)
        got = captured.run(stack, x, LENGTHS, states)
        expected = stack(x, LENGTHS, states)
    assert_close(got, expected)
    assert len(captured.loops_of(stack).buckets) == 2


def test_a_call_that_wants_gradients_runs_the_wavefront_uncaptured():
    stack = random_stack(2)
    x, states = inputs(stack)
    loop = CapturedLoop()
    outputs, _ = loop(stack, x, LENGTHS, states)
    outputs[-1].sum().backward()
    assert len(loop.buckets) == 0
    assert all(p.grad is not None for p in stack.parameters())
    with torch.no_grad():
        expected = stack(x, LENGTHS, states)[0][-1].numpy()
    np.testing.assert_allclose(outputs[-1].detach().numpy(), expected, atol=1e-5, rtol=0)
