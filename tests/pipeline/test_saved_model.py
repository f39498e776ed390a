"""The elmo component's saved model (spacy_elmo/pipeline/saved_model.py): a model saved with another
kind of pooling than the config builds loads the biLM's weights, the pooling's settings stay the
config's, and a file written over is whole, the old or the new."""

import numpy as np
import pytest
import spacy

from spacy_elmo.pipeline.saved_model import load_model_bytes, replace_file
from tests.support.pipelines import elmo_config

TEXT = "She sat on the bank ."


def _component(pooling):
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config={**elmo_config(), "pooling": pooling})
    nlp.initialize()
    return nlp, elmo


def test_a_model_saved_with_another_kind_of_pooling_loads_the_biLMs_weights():
    nlp, elmo = _component("top")
    expected = nlp(TEXT)._.elmo["layers"]
    other_nlp, other = _component({"@layers": "spacy-elmo.ScalarMix.v2", "trainable": False})
    for parameter in other.model.layers[0].shims[0]._model.parameters():  # other weights until loaded
        parameter.data.mul_(2.0)
    assert not np.array_equal(other_nlp(TEXT)._.elmo["layers"], expected)
    load_model_bytes(other.model, other.pooling, elmo.model.to_bytes())
    np.testing.assert_array_equal(other_nlp(TEXT)._.elmo["layers"], expected)
    assert next(other.pooling.walk()).name != next(elmo.pooling.walk()).name  # the configured kind stays


def test_the_pooling_keeps_the_attrs_it_was_built_with():
    _, saved = _component("top")
    _, loaded = _component("top")
    node = next(loaded.pooling.walk())
    node.attrs["marker"] = "configured"
    load_model_bytes(loaded.model, loaded.pooling, saved.model.to_bytes())
    assert next(loaded.pooling.walk()).attrs["marker"] == "configured"


def test_a_file_written_over_is_the_old_one_when_writing_fails(tmp_path, monkeypatch):
    path = tmp_path / "model"
    replace_file(path, b"old")
    monkeypatch.setattr(type(path), "write_bytes", lambda self, data: (_ for _ in ()).throw(OSError("full")))
    with pytest.raises(OSError):
        replace_file(path, b"new")
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["model"]
