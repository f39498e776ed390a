"""benchmarks/bench_launches.py counts what each inference candidate launches, on the CPU, by
benchmarks/launch_count.py's rule: views launch nothing, a kernel counts once, a composite once where it
does work, and the plain step loop's batch is counted in full; the wavefront launches at most a
quarter of what the step loop launches (issue's CPU target between GPU sessions)."""

import re

import pytest
import torch

from benchmarks.bench_launches import count_launches, count_variant, measure
from benchmarks.variants import Setup, of_kind
from tests.support.cli import run_cli


def test_views_launch_nothing_and_kernels_count_once():
    x = torch.randn(4, 4)
    assert count_launches(lambda: x.t().unsqueeze(0)) == 0
    assert count_launches(lambda: torch.mm(x, x).add_(1)) == 2
    assert count_launches(lambda: x.reshape(16).contiguous().to(torch.float32)) == 0
    assert count_launches(lambda: torch.nn.functional.linear(x, x)) == 1  # a composite: once
    assert count_launches(lambda: x.to(torch.float64)) == 1  # a composite that copies


@pytest.mark.slow
def test_the_step_loop_batch_is_counted():
    setup = Setup(torch.device("cpu"), "tiny", 2)
    assert count_variant(of_kind("inference")[0], setup) > 100
    assert len(measure(of_kind("inference"), setup)) == len(of_kind("inference"))


@pytest.mark.slow
def test_the_wavefront_launches_at_most_a_quarter_of_the_step_loops():
    """Four launches a wave step (spacy_elmo/elmo/nn/time_loops/wave_cell.py) against a dozen a step and layer, on the
    tiny model's batch of four sentences, counted as a user runs the benchmark: in a fresh process,
    whose compiled kernels are named in the profile from their first compile."""
    result = run_cli(
        "--tiny", "--only", "inference, plain step loop", "inference, wavefront", module="benchmarks.bench_launches"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    counts = dict(re.findall(r"^(inference, [a-z ]+?)\s+([\d,]+) kernels", result.stdout, re.MULTILINE))
    step_loop, wavefront = (
        int(counts[name].replace(",", "")) for name in ("inference, plain step loop", "inference, wavefront")
    )
    assert wavefront <= step_loop / 4, result.stdout


def test_a_captured_time_loop_counts_as_one_launch():
    """On a GPU the captured loop is one graph replay, whatever it runs (spacy_elmo/elmo/nn/time_loops/captured.py)."""
    from spacy_elmo.elmo.nn.time_loops.captured import CAPTURED_RANGE

    x = torch.randn(4, 4)

    def captured() -> None:
        with torch.profiler.record_function(CAPTURED_RANGE):
            torch.mm(x, x).add_(1).mul_(2)

    assert count_launches(captured) == 1
    assert count_launches(lambda: (captured(), torch.mm(x, x))) == 2
