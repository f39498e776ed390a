"""benchmarks/bench_gpu.py runs end to end on the CPU at the tiny size, through the code a GPU runs, so
that a crash in it (such as the presets' `[paths] dev` it once left in place) fails CI, not a GPU session."""

import pytest

from .cli import run_cli
from .paths import REPO
from .tiny_corpus import write_tiny_corpus


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
