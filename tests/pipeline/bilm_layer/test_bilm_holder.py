"""A saved pipeline is data: its biLM's parameters are written as safetensors (no pickle), and biLM bytes
that hold a torch pickle instead (one that runs code, here) are refused without unpickling anything, also
with torch's old default (`weights_only=False`) forced on through its environment variable."""

import builtins
import io

import pytest
import spacy
import srsly
import torch

from spacy_elmo.elmo.errors import OptionsError
from spacy_elmo.pipeline.bilm_layer.bilm_holder import SavedWeightsError
from tests.support.pipelines import elmo_config
from tests.support.saved_pipelines import holder_of, with_holder_changed

ELMO = elmo_config()


class _RunsCode:
    """Unpickled, it writes a file: the stand-in for an attacker's payload."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (builtins.exec, (f"open({self.marker!r}, 'w').write('ran')",))


def _with_saved_biLM(data, change):
    """The component's bytes `data` with the biLM's saved message changed in place by `change`."""
    msg = srsly.msgpack_loads(data)
    msg["model"] = with_holder_changed(msg["model"], change)
    return srsly.msgpack_dumps(msg)


def _saved_biLM(data):
    return holder_of(srsly.msgpack_loads(data)["model"])


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


def _header_changed(old, new):
    """A change of the safetensors header's text (the same length: the data offsets stay right)."""

    def change(saved):
        assert len(old) == len(new) and old in saved["safetensors"]
        saved["safetensors"] = saved["safetensors"].replace(old, new, 1)

    return change


@pytest.mark.parametrize(
    "change, message",
    [
        (_header_changed(b'"F32"', b'"I32"'), r"'bilm\.\S+' is torch\.int32 of shape .* build torch\.float32"),
        (_header_changed(b"[262,4]", b"[4,262]"), r"of shape \[4, 262\], but its options build .* \[262, 4\]"),
        (_header_changed(b'"bilm.', b'"bilx.'), r"weights lack 'bilm\.\S+', a tensor of the biLM its options"),
        (lambda saved: saved.update(manylangs="abc"), "format parts do not describe a model"),
        (lambda saved: saved.update(tfhub=[1, 2]), "format parts do not describe a model"),
        (lambda saved: saved.update(safetensors=12), "weights are damaged"),
        (lambda saved: saved.pop("options"), "holds no options"),
    ],
    ids=["int32", "shape", "name", "manylangs_part", "tfhub_part", "weights_type", "no_options"],
)
def test_saved_tensors_are_checked_against_the_options_before_loading(change, message):
    """Each of these once loaded: an int32 tensor copied value by value into the float parameters."""
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=ELMO)
    nlp.initialize()
    with pytest.raises(SavedWeightsError, match=message):
        spacy.blank("en").add_pipe("elmo", config=ELMO).from_bytes(_with_saved_biLM(elmo.to_bytes(), change))


def test_saved_options_out_of_bounds_are_an_options_error_naming_the_key():
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config=ELMO)
    nlp.initialize()
    data = _with_saved_biLM(elmo.to_bytes(), lambda saved: saved["options"]["lstm"].update(dim="wide"))
    with pytest.raises(OptionsError, match="'lstm.dim' must be a valid integer"):
        spacy.blank("en").add_pipe("elmo", config=ELMO).from_bytes(data)
