"""`python -m spacy_elmo export` (spacy_elmo/cli/export.py): a model name to a folder that loads back by
path as the model it names; a folder holding files already is refused without a traceback."""

import torch

from spacy_elmo import load_bilm
from tests.support.cli import assert_clear_error, run_cli


def test_export_writes_a_folder_that_loads_as_the_model(tmp_path):
    result = run_cli("export", tmp_path / "tiny", "--model", "fixture-tiny", "--repo-id", "org/tiny")
    assert result.returncode == 0, result.stderr
    assert "model.safetensors" in result.stdout
    sentences = [["A", "test", "."]]
    exported = load_bilm(tmp_path / "tiny").forward_sentences(sentences).layers
    assert torch.equal(exported, load_bilm("fixture-tiny").forward_sentences(sentences).layers)
    assert "hf:org/tiny" in (tmp_path / "tiny" / "README.md").read_text(encoding="utf8")
    assert_clear_error(run_cli("export", tmp_path / "tiny"), "not a new or empty folder")
