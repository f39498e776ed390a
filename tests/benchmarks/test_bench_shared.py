"""`bench_shared` runs end to end on a tiny corpus and prints a row per layout (the figures themselves
are measured on an idle machine: docs/results.md)."""

import pytest

from tests.cli.test_fill_elmo import corpus
from tests.support.cli import run_cli
from tests.support.paths import REPO, TINY_MODEL


@pytest.mark.slow
def test_both_layouts_train_evaluate_and_print_a_row(tmp_path):
    train, dev = corpus(tmp_path / "train.spacy", 8), corpus(tmp_path / "dev.spacy", 1)
    result = run_cli(
        "--train", train, "--dev", dev, "--test", dev, "--max-steps", 2, "--model", TINY_MODEL,
        module="benchmarks.bench_shared", cwd=REPO, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    rows = [line.split("|")[1:3] for line in result.stdout.splitlines() if line.startswith("| ")][1:]
    assert [[cell.strip() for cell in row] for row in rows] == [["per-head", "0"], ["shared", "0"]]
