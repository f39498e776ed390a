"""benchmarks/bench_long_doc_memory.py prints one row per `store_layers` setting, each doc measured in a
process of its own."""

import re

import pytest

from tests.support.cli import run_cli


@pytest.mark.slow
def test_one_row_per_setting_with_its_peak_and_what_the_doc_keeps():
    args = ["--model", "fixture-tiny", "--tokens", "2000", "--stores", "float32,float16"]
    result = run_cli(*args, module="benchmarks.bench_long_doc_memory")
    assert result.returncode == 0, result.stderr
    rows = re.findall(r"store_layers (\w+) *: one doc of [\d,]+ tokens peaks \d+ MB .* keeps (\d+) MB", result.stdout)
    assert [store for store, _ in rows] == ["float32", "float16"], result.stdout
