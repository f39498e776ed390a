"""`python -m spacy_elmo push` (spacy_elmo/cli/push.py): without a token it fails naming HF_TOKEN and
`hf auth login`, a folder holding no model fails before anything is uploaded, and a Hub that cannot be
reached (a closed port as HF_ENDPOINT) or offline mode (HF_HUB_OFFLINE=1) is one error line naming the
cause and the fix, all without a traceback. (The upload's calls are checked in
tests/elmo/sources/hub/test_hf.py.)"""

import socket

import pytest

from tests.support.cli import assert_clear_error, run_cli


@pytest.fixture
def exported(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert run_cli("export", tmp_path / "tiny", "--model", "fixture-tiny").returncode == 0
    return tmp_path / "tiny"


def closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (bound once, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_push_to_a_hub_that_cannot_be_reached_is_one_error_line(exported, monkeypatch):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    result = run_cli("push", exported, "org/tiny")
    assert_clear_error(result, f"the Hub at {endpoint} cannot be reached", "HF_ENDPOINT")
    assert result.stderr.count("\n") == 1


def test_push_in_offline_mode_is_one_error_line(exported, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = run_cli("push", exported, "org/tiny")
    assert_clear_error(result, "HF_HUB_OFFLINE is set: unset it")
    assert result.stderr.count("\n") == 1


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
