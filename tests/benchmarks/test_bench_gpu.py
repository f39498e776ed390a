"""benchmarks/bench_gpu.py runs end to end on the CPU at the tiny size, through the code a GPU runs, so
that a crash in it (such as the presets' `[paths] dev` it once left in place) fails CI, not a GPU session."""

import re
import sys
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch

from benchmarks import bench_gpu
from benchmarks.variants import INFERENCE, PRETRAINING, Variant, Workload, of_kind
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


def test_variants_table_starts_no_candidate_it_cannot_finish_before_the_time_limit(monkeypatch):
    """`--time-limit`: a candidate whose time at the batch size before is more than the time left gets a
    "NOT TIMED" row instead of running, while one that still fits runs, so the call ends near its limit
    with the rows it has. The clock is the test's own: each unit of work moves it on by the candidate's
    duration."""
    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(bench_gpu, "time", SimpleNamespace(monotonic=lambda: clock.now, perf_counter=lambda: clock.now))
    started: list = []

    def taking(seconds: float):
        def prepare(setup):
            def run(units: int) -> None:
                started.append(setup.batch_size)
                clock.now += seconds / 2  # run twice: the warm-up, then the timed run

            return Workload(run=run, tokens=10, flops_per_token=1.0)

        return prepare

    registry = {"plain": Variant(INFERENCE, taking(2.0)), "slow": Variant(INFERENCE, taking(6.0))}
    monkeypatch.setattr(bench_gpu, "VARIANTS", registry)
    monkeypatch.setattr(bench_gpu, "of_kind", lambda kind: list(registry) if kind == INFERENCE else [])
    size = replace(bench_gpu.TINY, batch_sizes=(1, 2, 3))
    rows = list(bench_gpu.variants_table(torch.device("cpu"), size, {}, deadline=15.0))
    assert [row.split(" (")[0].split(":")[0] for row in rows] == [
        "plain, batch 1",
        "slow, batch 1",
        "plain, batch 2",
        "slow, batch 2",
        "plain, batch 3",
        "slow, batch 3",
    ]
    # 2 + 6 + 2 s: at 10 s, 5 s are left, less than the slow candidate's 6 but more than the plain one's 2;
    # at 12 s the slow one still does not fit.
    assert [row.endswith("NOT TIMED, too little of --time-limit left") for row in rows] == [
        False,
        False,
        False,
        True,
        False,
        True,
    ]
    assert started == [1, 1, 1, 1, 2, 2, 3, 3]  # each started candidate ran twice
    assert clock.now == 12.0


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--variants", "--time-limit", "0"], "--time-limit must be a positive number of seconds, not 0"),
        (["--time-limit", "60"], "--time-limit applies to --variants only"),
    ],
)
def test_bench_gpu_refuses_a_time_limit_it_would_not_keep(tmp_path, monkeypatch, capsys, arguments, message):
    monkeypatch.setattr(sys, "argv", ["bench_gpu", str(tmp_path), "--device", "cpu", *arguments])
    with pytest.raises(SystemExit):
        bench_gpu.main()
    assert message in capsys.readouterr().err


def test_a_candidate_gets_no_ratio_when_the_plain_path_was_not_timed(monkeypatch):
    """The ratios compare with the plain path (the kind's first candidate) at the same batch size: where it
    failed, the others say so instead of taking the next candidate as the 1.00x."""

    def prepare_failing(setup):
        raise RuntimeError("out of memory")

    def prepare_working(setup):
        return Workload(run=lambda units: None, tokens=10, flops_per_token=1.0)

    registry = {"plain": Variant(INFERENCE, prepare_failing), "other": Variant(INFERENCE, prepare_working)}
    monkeypatch.setattr(bench_gpu, "VARIANTS", registry)
    monkeypatch.setattr(bench_gpu, "of_kind", lambda kind: list(registry) if kind == INFERENCE else [])
    rows = list(bench_gpu.variants_table(torch.device("cpu"), replace(bench_gpu.TINY, batch_sizes=(1,)), {}))
    assert rows[0] == "plain, batch 1: FAILED, RuntimeError: out of memory"
    assert rows[1].startswith("other, batch 1 (plain path not timed)"), rows
