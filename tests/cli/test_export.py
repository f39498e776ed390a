"""`python -m spacy_elmo export` (spacy_elmo/cli/export.py): a model name to a folder that loads back by
path as the model it names; a folder holding files already, a repository name the Hub forbids and, at
`push`, an export cut short are refused without a traceback."""

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


def test_a_bad_repo_id_is_refused_and_nothing_is_written(tmp_path):
    result = run_cli("export", tmp_path / "tiny", "--model", "fixture-tiny", "--repo-id", "a..b/c")
    assert_clear_error(result, "'a..b/c' is not a Hub repository name", "'--' and '..'")
    assert not (tmp_path / "tiny").exists()


def test_push_refuses_an_export_cut_short(tmp_path, monkeypatch):
    from spacy_elmo.elmo.formats.detect import INCOMPLETE_EXPORT
    from spacy_elmo.elmo.sources import reference_to
    from spacy_elmo.elmo.sources.export import export_model

    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # an upload would fail otherwise
    export_model(reference_to("fixture-tiny"), tmp_path / "tiny")
    (tmp_path / "tiny" / INCOMPLETE_EXPORT).write_text("", encoding="utf8")  # as an export killed midway leaves
    assert_clear_error(run_cli("push", tmp_path / "tiny", "org/tiny"), "is an export that did not finish")
