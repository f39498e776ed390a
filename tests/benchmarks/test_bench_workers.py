"""bench_workers runs its three rows in fresh interpreters and prints a figure for each."""

import re

import pytest

from benchmarks import bench_workers


@pytest.mark.slow
def test_each_row_prints_tokens_per_second(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text("She went to the bank .\nThey sat on the bank of the river .\n" * 4, encoding="utf8")
    bench_workers.main(["--start-method", "fork", "--repeat", "1", "--rounds", "1", "--text", str(text)])
    out = capsys.readouterr().out
    rows = re.findall(r"^round 1  (.+?)\s+([\d,]+) tokens/s \(([\d.]+) s\)$", out, re.MULTILINE)
    names = [name.split(",")[0] for name, _, _ in rows]
    assert names == ["one process (torch's default threads)", "2 workers", "2 workers"]
    assert "one thread each (default)" in rows[1][0] and "(OMP_NUM_THREADS)" in rows[2][0]
    assert all(int(tokens.replace(",", "")) > 0 for _, tokens, _ in rows)
