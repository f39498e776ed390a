"""The wave step's two elementwise halves: compiled they give what they give eagerly, a wave step is
two products and two compiled calls, calls that want gradients and a failed compile run them eagerly.

The wavefront's results against the step loop and the TF fixtures: test_wavefront.py."""

import logging
import subprocess
import sys
from collections import Counter

import pytest
import torch

from spacy_elmo.elmo.nn.time_loops import wave_cell, wavefront
from tests.elmo.nn.time_loops.test_wavefront import LENGTHS, assert_close, inputs, random_stack


def cell_inputs(rows: int, before: int, n_layers: int = 2, cell: int = 7):
    """Gates for `rows` rows, cell states and lengths of `before` rows (the rows past `rows` have ended)."""
    torch.manual_seed(1)
    gates = torch.randn(2 * n_layers, rows, 4 * cell) * 3
    bias = torch.randn(2 * n_layers, 1, 4 * cell)
    c = torch.randn(2 * n_layers, before, cell)
    times = torch.tensor([0, 0, -1, -1][: 2 * n_layers]).view(-1, 1, 1) + 2
    lengths = torch.tensor([2, 5, 3, 1, 0, 0][:before])
    return gates, bias, c, times, lengths


@pytest.mark.compiled
@pytest.mark.parametrize("rows,before,clip", [(4, 4, 0.6), (3, 4, None), (1, 3, 0.6)])
def test_the_compiled_cell_update_is_the_eager_one(rows, before, clip):
    """All rows, fewer rows than the step before (rows that ended), one row; with and without a clip."""
    args = (*cell_inputs(rows, before), 7, clip)
    got = torch.compile(wave_cell.cell_update, dynamic=True)(*args)
    expected = wave_cell.cell_update(*args)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=1e-6, rtol=0)
    m, c = expected
    assert m.shape == (4, rows, 7) and c.shape == (4, rows, 7)
    outside = ~wave_cell.inside(args[3], args[4], rows).expand_as(c)
    assert outside.any() and torch.equal(c[outside], args[2][:, :rows][outside]), "ended steps keep their state"


@pytest.mark.compiled
@pytest.mark.parametrize("rows,before,n_layers,skip", [(4, 4, 3, True), (2, 4, 3, False), (2, 4, 1, True)])
def test_the_compiled_output_update_is_the_eager_one(rows, before, n_layers, skip):
    torch.manual_seed(2)
    proj, width, batch = 4, 6, 5
    projected = torch.randn(2 * n_layers, rows, proj)
    h = torch.randn(2 * n_layers, before, proj)
    xh = torch.randn(2 * n_layers, before, width + proj)
    x_next = torch.randn(2, batch, width)
    times = -(torch.arange(2 * n_layers) // 2).view(-1, 1, 1) + 1
    lengths = torch.tensor([3, 3, 1, 1, 0])[:batch]
    args = (projected, h, xh, x_next, times, lengths, 0.5, skip)
    got = torch.compile(wave_cell.output_update, dynamic=True)(*args)
    expected = wave_cell.output_update(*args)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=1e-6, rtol=0)
    new_h, out, next_xh, next_times = expected
    assert out.shape == (2 * n_layers, batch, proj) and not out[:, rows:].any()
    assert next_xh.shape == (2 * n_layers, rows, width + proj)
    assert torch.equal(next_xh[..., width:], new_h) and torch.equal(next_times, times + 1)
    assert torch.equal(next_xh[:2, :, :width], x_next[:, :rows]), "layer 0's next input is x"
    if n_layers > 1:  # layer 1's input is layer 0's output; layer 2's adds layer 1's input with skips
        assert torch.equal(next_xh[2:4, :, :proj], out[:2, :rows])
        below = xh[2:4, :rows, :proj] if skip else 0
        torch.testing.assert_close(next_xh[4:6, :, :proj], out[2:4, :rows] + below)
        assert not next_xh[2:, :, proj:width].any(), "inputs narrower than I are zero-padded"


@pytest.mark.compiled
def test_a_wave_step_is_two_products_and_two_compiled_calls():
    """No elementwise operator of its own: each half of the step is one compiled graph, which inductor
    makes one kernel (counted in a fresh process: tests/benchmarks/test_bench_launches.py)."""
    stack = random_stack(2)
    x, states = inputs(stack)
    with torch.no_grad():
        wavefront.run(stack, x, LENGTHS, states)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
            wavefront.run(stack, x, LENGTHS, states)
    names = Counter(event.name for event in profile.events())
    wave_steps = max(LENGTHS) + 1
    assert names["aten::bmm"] == 2 * wave_steps
    assert sum(count for name, count in names.items() if name.startswith("Torch-Compiled Region")) == 2 * wave_steps
    assert not {"aten::sigmoid", "aten::tanh", "aten::where", "aten::addcmul", "aten::clamp"} & set(names)


@pytest.mark.compiled
def test_a_call_that_wants_gradients_runs_the_functions_eagerly(monkeypatch):
    compiled_calls = []

    def recording_compile(function, **_):
        def run(*args):
            compiled_calls.append(function.__name__)
            return function(*args)

        return run

    monkeypatch.setattr(wave_cell.torch, "compile", recording_compile)
    monkeypatch.setattr(wavefront, "WAVE_CELL", wave_cell.WaveCell())
    stack = random_stack(2)
    x, states = inputs(stack)
    wavefront.run(stack, x.requires_grad_(), LENGTHS, states)
    assert compiled_calls == []
    with torch.no_grad():
        wavefront.run(stack, x, LENGTHS, states)
    assert set(compiled_calls) == {"cell_update", "output_update"}


@pytest.mark.compiled
def test_a_failed_compile_warns_once_and_runs_the_same_arithmetic(monkeypatch, caplog):
    def failing_compile(function, **_):
        def run(*args):
            raise torch._dynamo.exc.TorchDynamoException("no C++ compiler found")

        return run

    stack = random_stack(3)
    x, states = inputs(stack)
    with torch.no_grad():
        expected = stack(x, LENGTHS, states)
        monkeypatch.setattr(wave_cell.torch, "compile", failing_compile)
        cell = wave_cell.WaveCell()
        monkeypatch.setattr(wavefront, "WAVE_CELL", cell)
        with caplog.at_level(logging.WARNING, logger=wave_cell.__name__):
            got = wavefront.run(stack, x, LENGTHS, states)
            wavefront.run(stack, x, LENGTHS, states)
    assert_close(got, expected)
    assert not cell.compiling
    warnings = [r for r in caplog.records if "could not be compiled" in r.getMessage()]
    assert len(warnings) == 1 and "no C++ compiler found" in warnings[0].getMessage()


# A process compiles the wave step with torch running more threads than the machine has logical CPUs
# (as torch's default of one thread a physical core differs from them where cores run two threads each),
# then forks a child that the fork guard makes single-threaded, and the child runs the step again.
FORKED_CHILD = """
import os, signal, sys, time
import torch
from spacy_elmo.elmo.nn.time_loops.wave_cell import WAVE_CELL
from spacy_elmo.pipeline.bilm_layer.process_state import PROCESS

torch.set_num_threads(os.cpu_count() + 1)
torch.manual_seed(0)
n, rows, cell = 4, 64, 256
args = (torch.randn(n, rows, 4 * cell), torch.randn(n, 1, 4 * cell), torch.randn(n, rows, cell),
        torch.zeros(n, 1, 1, dtype=torch.long), torch.full((rows,), 3), cell, 3.0)
expected = WAVE_CELL.cell(*args, compiled=True)
PROCESS.single_threaded_in_workers()
pid = os.fork()
if pid == 0:
    got = WAVE_CELL.cell(*args, compiled=True)
    os._exit(0 if torch.get_num_threads() == 1 and all(map(torch.equal, got, expected)) else 3)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        sys.exit(os.waitstatus_to_exitcode(status))
    time.sleep(0.2)
os.kill(pid, signal.SIGKILL)
sys.exit("the forked child did not finish the compiled step within 60 s")
"""


@pytest.mark.slow
@pytest.mark.compiled
def test_the_compiled_step_takes_its_threads_from_torch_at_each_call():
    """Compiled at several threads, the step runs in a single-threaded forked child (a kernel that kept
    the compiling moment's count would open its threads there and hang)."""
    result = subprocess.run([sys.executable, "-c", FORKED_CHILD], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
