"""`python -m spacy_elmo push` (spacy_elmo/cli/push.py): without a token it fails naming HF_TOKEN and
`hf auth login`, and a folder holding no model fails before anything is uploaded, both without a
traceback. (The upload's calls are checked in tests/elmo/sources/hub/test_hf.py.)"""

from tests.support.cli import assert_clear_error, run_cli


def test_push_without_a_token_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no token stored by `hf auth login`
    assert run_cli("export", tmp_path / "tiny", "--model", "fixture-tiny").returncode == 0
    assert_clear_error(run_cli("push", tmp_path / "tiny", "org/tiny"), "needs a Hugging Face token", "HF_TOKEN")


def test_push_of_a_folder_without_a_model_uploads_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: an upload would fail otherwise
    (tmp_path / "empty").mkdir()
    assert_clear_error(run_cli("push", tmp_path / "empty", "org/tiny"), "holds no ELMo model")
