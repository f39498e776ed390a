"""benchmarks/gpu_profile.py runs on the CPU at the tiny size through the code a GPU runs, so that the
table the next GPU call prints cannot rot unseen: a pretraining candidate counted over its last steps
only, an inference candidate after its warm-up."""

import re
from types import SimpleNamespace

import pytest

from benchmarks import gpu_profile
from tests.support.tiny_corpus import write_tiny_corpus

ROW = re.compile(r"^\s+(\d+\.\d)%\s+(\d+\.\d+) ms\s+(\d+\.\d) calls\s+\S")


@pytest.mark.slow
def test_profile_tables_rank_the_time_of_each_candidate(tmp_path, capsys):
    write_tiny_corpus(tmp_path / "corpus")
    gpu_profile.main([str(tmp_path / "corpus" / "train"), "--device", "cpu", "--tiny"])
    lines = capsys.readouterr().out.splitlines()
    headers = [i for i, line in enumerate(lines) if " ms of CPU time a " in line]
    assert [lines[i].split(":")[0] for i in headers] == [
        f"{name}, batch {batch}" for name, batch in map(gpu_profile.parse_variant, gpu_profile.TINY_VARIANTS)
    ]
    assert "a batch" in lines[headers[0]] and "a step" in lines[headers[1]]
    # No CUDA runtime on the CPU: no launches counted.
    assert all("0.0 kernel launches and 0.0 CUDA graph launches" in lines[i] for i in headers)
    for start, end in zip(headers, headers[1:] + [len(lines)]):
        rows = [ROW.match(line) for line in lines[start + 1 : end]]
        assert len(rows) >= 5 and all(rows), lines[start:end]
        shares = [float(row.group(1)) for row in rows]
        assert shares == sorted(shares, reverse=True) and sum(shares) <= 100.5
        total = float(lines[start].split(": ")[1].split(" ms")[0].replace(",", ""))  # "3,266.08" past 1,000 ms
        assert total > 0 and float(rows[0].group(2)) <= total


def test_an_unknown_variant_is_refused_with_the_choices():
    with pytest.raises(SystemExit, match="give NAME:BATCH with NAME one of: inference, plain step loop"):
        gpu_profile.parse_variant("inference, fused:128")


def test_launches_count_the_runtime_calls_per_unit_a_graph_replay_once():
    names = ["cudaLaunchKernel"] * 6 + [
        "cuLaunchKernel",
        "cudaGraphLaunch",
        "cudaGraphLaunch",
        "aten::mm",
        "cudaMemcpyAsync",
    ]
    events = [SimpleNamespace(name=name) for name in names]
    assert gpu_profile.launches(events, units=2) == (3.5, 1.0)
