"""`dump --gpu-id`: the option reaches the device choice (a machine without a GPU says so and writes
nothing) and stays with the local engine. Its results on a GPU: tests/test_gpu.py."""

import pytest
import torch

from tests.cli import assert_clear_error, run_cli
from tests.paths import TINY_MODEL


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine without a GPU")
def test_gpu_id_without_a_gpu_is_a_message_and_no_file(tmp_path):
    text = tmp_path / "input.txt"
    text.write_text("the bank of the river .\n", encoding="utf8")
    out = tmp_path / "layers.hdf5"
    result = run_cli("dump", text, out, "--model", TINY_MODEL, "--gpu-id", 0, "--no-progress")
    assert_clear_error(result, "--gpu-id 0: no GPU that spaCy can use")
    assert not out.exists()


def test_gpu_id_is_for_the_local_engine(tmp_path):
    result = run_cli("dump", "*.txt", tmp_path / "out", "--engine", "ray", "--gpu-id", 0)
    assert_clear_error(result, "--gpu-id is for --engine local")
