"""benchmarks/bench_gpu.py runs end to end on the CPU at the tiny size, through the code a GPU runs, so
that a crash in it (such as the presets' `[paths] dev` it once left in place) fails CI, not a GPU session."""

import re
import sys

import pytest
import torch

from benchmarks import bench_gpu
from benchmarks.variants import INFERENCE, PRETRAINING, of_kind
from tests.support.cli import run_cli
from tests.support.paths import REPO
from tests.support.tiny_corpus import write_tiny_corpus


@pytest.mark.slow
def test_bench_gpu_runs_on_the_cpu_at_the_tiny_size(tmp_path):
    write_tiny_corpus(tmp_path / "corpus")
    result = run_cli(
        tmp_path / "corpus" / "train", "--device", "cpu", "--tiny", module="benchmarks.bench_gpu", cwd=REPO
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = [line for line in result.stdout.splitlines() if "tokens/s" in line]
    assert [f.split("  ")[0] for f in figures] == [
        "inference tiny, batch 1",
        "inference tiny, batch 4",
        "pretraining pretrain_tiny.cfg, fp32",
        "pretraining pretrain_tiny.cfg, tf32 + bf16 + prefetch",
    ]
    assert all("peak fp32/TF32 n/a" in f and f.endswith("busy n/a") for f in figures), figures
    assert "GPU: none (measured on the CPU)" in result.stdout
    assert "torch " in result.stdout


@pytest.mark.slow
def test_bench_gpu_variants_times_every_candidate_on_the_cpu(tmp_path, monkeypatch, capsys):
    """`--variants --device cpu --tiny`, in this process: one row per registered candidate and batch
    size, the plain path first at 1.00x; the pretraining candidates (step modes) at the tiny preset's
    batch."""
    write_tiny_corpus(tmp_path / "corpus")
    argv = ["bench_gpu", str(tmp_path / "corpus" / "train"), "--device", "cpu", "--tiny", "--variants"]
    monkeypatch.setattr(sys, "argv", argv)
    bench_gpu.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if "tokens/s" in line]
    names, steps = of_kind(INFERENCE), of_kind(PRETRAINING)
    assert [row.split(" (")[0] for row in rows] == [
        f"{n}, batch {b}" for b in bench_gpu.TINY.batch_sizes for n in names
    ] + [f"{n}, batch {b}" for b in bench_gpu.TINY.pretrain_batch_sizes for n in steps]
    assert all("(1.00x)" in row for row in rows[: -len(steps) : len(names)] + [rows[-len(steps)]]), rows
    assert all("peak fp32/TF32 n/a" in row and "busy n/a" in row for row in rows), rows
    # Graphs left uncaptured are counted on a GPU only: none on the CPU.
    assert all(row.endswith("graphs without CUDA graphs 0") for row in rows), rows
    deviations = [float(re.search(r"loss [0-9.]+ \(([^)]+)\)", row).group(1)) for row in rows[-len(steps) :]]
    assert deviations[0] == 0 and all(abs(d) <= 1e-4 for d in deviations), rows  # the same seed: the same losses


def test_busy_meter_reports_the_span_it_is_asked_for():
    """A pretraining row's busy figure covers its timed steps, not the compiling before them."""
    meter = bench_gpu.BusyMeter(torch.device("cpu"))
    meter.samples = [(1.0, 0.0), (2.0, 90.0), (3.0, 60.0)]
    assert meter.figure() == "50%"
    assert meter.figure((1.5, 3.5)) == "75%"
    assert meter.figure((4.0, 5.0)) == "n/a"
