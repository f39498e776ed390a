"""benchmarks/bench_dump.py prints one row per option, each with the size of the file that option's
`dump` writes."""

import re

import pytest

from benchmarks.bench_dump import OPTIONS
from tests.support.cli import run_cli


@pytest.mark.slow
def test_one_row_per_option_with_its_file_size():
    result = run_cli("--model", "fixture-tiny", "--tokens", "40", module="benchmarks.bench_dump")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if re.match(r"\| (all|top|average) \|", line)]
    assert len(rows) == len(OPTIONS)
    sizes = [int(row.split("|")[5].replace(",", "")) for row in rows]
    assert sizes[1] < sizes[0] and sizes[-2] < sizes[5] < sizes[0]  # float16; a mix; its sentence vector
