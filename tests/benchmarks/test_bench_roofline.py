"""benchmarks/bench_roofline.py's arithmetic: the FLOPs and bytes a token costs, and the roofline they give
(the figures themselves are measured on an idle machine: docs/results.md)."""

import re

import pytest
import torch

from benchmarks import bench_roofline
from benchmarks.bench_roofline import (
    lstm_products,
    products_bound_tokens_per_s,
    roofline_tokens_per_s,
    stream_gbs,
    streamed_bytes_per_token,
)
from benchmarks.common import flops_per_token
from spacy_elmo import preset

ORIGINAL = preset("original")


def test_a_token_streams_every_recurrent_and_projection_weight_once():
    # 2 layers x 2 directions x (512 x 16384 recurrent + 4096 x 512 projection) floats.
    assert streamed_bytes_per_token(ORIGINAL) == 4 * 2 * 2 * (512 * 16384 + 4096 * 512) == 167_772_160


def test_the_roofline_is_the_bandwidth_over_those_bytes():
    assert roofline_tokens_per_s(ORIGINAL, 167.77216) == pytest.approx(1000.0)


def test_stream_counts_bytes_as_stream_does():
    assert stream_gbs("copy", 10**9, 1.0) == pytest.approx(8.0)
    assert stream_gbs("triad", 10**9, 2.0) == pytest.approx(6.0)


def test_the_products_are_the_step_loop_s_shapes():
    # The input product spans MIN_INPUT_ROWS rows: 8 steps of 32.
    assert [(p.name, p.rows, p.inner, p.outer) for p in lstm_products(ORIGINAL, 32)] == [
        ("input", 256, 512, 16384),
        ("recurrent", 32, 512, 16384),
        ("projection", 32, 4096, 512),
    ]


@pytest.mark.parametrize("size", ["tiny", "small", "original"])
def test_products_at_the_best_rate_bound_the_model_at_its_flops(size):
    """The LSTM's products counted per token are the same FLOPs as the model's count: at one rate for
    everything the bound is that rate over the model's FLOPs per token."""
    options = preset(size)
    rates = {"input": 100.0, "recurrent": 100.0, "projection": 100.0}
    assert products_bound_tokens_per_s(options, rates, 100.0) == pytest.approx(100e9 / flops_per_token(options))
    slower = products_bound_tokens_per_s(options, {**rates, "recurrent": 50.0}, 100.0)
    recurrent = 2 * 2 * options.lstm.n_layers * options.lstm.projection_dim * 4 * options.lstm.dim
    assert 1 / slower == pytest.approx(flops_per_token(options) / 100e9 + recurrent / 100e9)


def test_a_run_prints_every_figure_of_the_point(monkeypatch, capsys):
    """At the tiny size, small arrays and one round: the bandwidth, each product's rate per kernel, and
    the two fractions."""
    monkeypatch.setattr(bench_roofline, "SQUARE", 64)
    sentences = [["The", "cat", "sat", "."], ["It", "rained", "all", "day", "long", "."]] * 8
    monkeypatch.setattr(bench_roofline, "load_sentences", lambda path, n_tokens, seed=0: sentences)
    arguments = "--size tiny --stream-mb 4 --rounds 1 --tokens 60 --threads 1"
    monkeypatch.setattr("sys.argv", ["bench_roofline", *arguments.split()])
    threads = torch.get_num_threads()
    try:
        bench_roofline.main()
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert re.search(r"stream: copy [\d.]+ GB/s, triad [\d.]+ GB/s", out)
    for name in ("input", "recurrent", "projection", "square"):
        assert re.search(rf"{name} .*MKL +[\d.]+", out), name
    assert re.search(r"batch 32: exact \d+ tokens/s = [\d.]+ GFLOP/s = [\d.]+ of the best sgemm", out)
    assert re.search(r"batch 1: exact \d+ tokens/s; [\d.]+ MB streamed a token .* [\d.]+ of it", out)
