"""A saved pipeline is data: loading one whose biLM bytes hold a pickle that runs code is refused, also
with torch's old default (`weights_only=False`) forced on through its environment variable."""

import builtins

import pytest
import spacy

from spacy_elmo.pipeline.bilm_layer.bilm_holder import BiLMHolder, UntrustedPickleError
from tests.support.pipelines import elmo_config

ELMO = elmo_config()


class _RunsCode:
    """Unpickled, it writes a file: the stand-in for an attacker's payload."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (builtins.exec, (f"open({self.marker!r}, 'w').write('ran')",))


@pytest.fixture
def crafted_pipeline(tmp_path, monkeypatch):
    """(a saved pipeline, its elmo component's bytes, the file the payload writes when it runs)."""
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=ELMO)
    nlp.initialize()
    marker = tmp_path / "code-ran"
    state_dict = BiLMHolder.state_dict
    monkeypatch.setattr(BiLMHolder, "state_dict", lambda self: {**state_dict(self), "x": _RunsCode(marker)})
    nlp.to_disk(tmp_path / "pipeline")
    data = elmo.to_bytes()
    monkeypatch.setattr(BiLMHolder, "state_dict", state_dict)
    return tmp_path / "pipeline", data, marker


def test_a_pipeline_whose_bilm_pickle_runs_code_is_refused(crafted_pipeline, monkeypatch):
    path, _, marker = crafted_pipeline
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(UntrustedPickleError, match="could run code") as info:
        spacy.load(path)
    assert str(path / "elmo") in str(info.value)
    assert not marker.exists()


def test_from_bytes_refuses_it_too(crafted_pipeline, monkeypatch):
    _, data, marker = crafted_pipeline
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    elmo = spacy.blank("en").add_pipe("elmo", config=ELMO)
    with pytest.raises(UntrustedPickleError):
        elmo.from_bytes(data)
    assert not marker.exists()
