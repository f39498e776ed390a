"""benchmarks/bench_launches.py counts what each candidate launches, on the CPU: views launch nothing,
and the compiled LSTM's windows count as one host launch each, so it launches far fewer from the host
than the step loop."""

import pytest
import torch

from benchmarks.bench_launches import count_launches, count_variant, measure
from benchmarks.variants import Setup, of_kind
from spacy_elmo.nn import compiled_lstm


def test_views_launch_nothing_and_kernels_count_once():
    x = torch.randn(4, 4)
    assert count_launches(lambda: x.t().unsqueeze(0)).kernels == 0
    assert count_launches(lambda: torch.mm(x, x).add_(1)).kernels == 2
    assert count_launches(lambda: x.reshape(16).contiguous().to(torch.float32)).kernels == 0


@pytest.mark.slow
def test_the_compiled_lstm_launches_fewer_from_the_host_than_the_step_loop(monkeypatch):
    monkeypatch.setattr(compiled_lstm, "WINDOW", 3)
    setup = Setup(torch.device("cpu"), "tiny", 2)
    plain, compiled = (count_variant(name, setup) for name in of_kind("inference")[:2])
    assert plain.kernels == plain.host_launches > 100
    assert compiled.host_launches < plain.host_launches / 2
    assert compiled.host_launches < compiled.kernels < plain.kernels
    assert len(measure(of_kind("inference")[:1], setup)) == 1
