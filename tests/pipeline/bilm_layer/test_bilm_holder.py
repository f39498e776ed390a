"""A saved pipeline is data: its biLM's parameters are written as safetensors (no pickle), and biLM bytes
that hold a torch pickle instead (one that runs code, here) are refused without unpickling anything, also
with torch's old default (`weights_only=False`) forced on through its environment variable."""

import builtins
import io

import pytest
import spacy
import srsly
import torch

from spacy_elmo.pipeline.bilm_layer.bilm_holder import SavedWeightsError
from tests.support.pipelines import elmo_config

ELMO = elmo_config()


class _RunsCode:
    """Unpickled, it writes a file: the stand-in for an attacker's payload."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (builtins.exec, (f"open({self.marker!r}, 'w').write('ran')",))


def _with_saved_biLM(data, change):
    """The component's bytes `data` with the biLM's saved message (bilm_holder.serialize_holder's) changed
    in place by `change`; the layers of bytes are thinc's model, its PyTorch shim, the holder."""
    msg = srsly.msgpack_loads(data)
    model = srsly.msgpack_loads(msg["model"])
    shims = next(shims for shims in model["shims"] if shims)
    shim = srsly.msgpack_loads(shims[0])
    saved = srsly.msgpack_loads(shim["state"])
    change(saved)
    shim["state"] = srsly.msgpack_dumps(saved)
    shims[0] = srsly.msgpack_dumps(shim)
    msg["model"] = srsly.msgpack_dumps(model)
    return srsly.msgpack_dumps(msg)


def _saved_biLM(data):
    found = []
    _with_saved_biLM(data, found.append)
    return found[0]


def _as_pickled(elmo, state):
    """The component's bytes with the biLM's parameters as the torch pickle of `state`."""

    def pickled(saved):
        buffer = io.BytesIO()
        torch.save(state, buffer)
        del saved["safetensors"]
        saved["state"] = buffer.getvalue()

    return _with_saved_biLM(elmo.to_bytes(), pickled)


def _holder(elmo):
    return next(node.shims[0]._model for node in elmo.model.walk() if node.shims)


@pytest.fixture
def crafted_pipeline(tmp_path):
    """(a saved pipeline, its elmo component's bytes, the file the payload writes when it runs)."""
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=ELMO)
    nlp.initialize()
    marker = tmp_path / "code-ran"
    data = _as_pickled(elmo, {**_holder(elmo).state_dict(), "x": _RunsCode(marker)})
    nlp.to_disk(tmp_path / "pipeline")
    (tmp_path / "pipeline" / "elmo" / "model").write_bytes(srsly.msgpack_loads(data)["model"])
    return tmp_path / "pipeline", data, marker


def test_the_biLM_is_saved_as_safetensors_and_loads_back_exactly():
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=ELMO)
    nlp.initialize()
    saved = _saved_biLM(elmo.to_bytes())
    assert "state" not in saved and saved["safetensors"][8:9] == b"{"  # the header's JSON, no pickle
    again = spacy.blank("en").add_pipe("elmo", config=ELMO).from_bytes(elmo.to_bytes())
    for (name, a), (_, b) in zip(_holder(elmo).state_dict().items(), _holder(again).state_dict().items()):
        assert torch.equal(a, b), name


def test_damaged_safetensors_weights_are_refused_with_the_fix():
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=ELMO)
    nlp.initialize()
    damaged = _with_saved_biLM(elmo.to_bytes(), lambda saved: saved.update(safetensors=saved["safetensors"][:100]))
    with pytest.raises(SavedWeightsError, match="damaged.*save the pipeline again"):
        spacy.blank("en").add_pipe("elmo", config=ELMO).from_bytes(damaged)


def test_a_pipeline_whose_bilm_pickle_runs_code_is_refused(crafted_pipeline, monkeypatch):
    path, _, marker = crafted_pipeline
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(SavedWeightsError, match="not saved by this spacy-elmo.*build the pipeline again") as info:
        spacy.load(path)
    assert str(path / "elmo") in str(info.value)
    assert not marker.exists()


def test_from_bytes_refuses_it_too(crafted_pipeline, monkeypatch):
    _, data, marker = crafted_pipeline
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    elmo = spacy.blank("en").add_pipe("elmo", config=ELMO)
    with pytest.raises(SavedWeightsError):
        elmo.from_bytes(data)
    assert not marker.exists()
