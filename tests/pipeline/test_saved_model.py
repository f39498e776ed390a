"""The elmo component's saved model (spacy_elmo/pipeline/saved_model.py): a model saved with or without
its pooling node loads the biLM's weights, the pooling's settings stay the config's, and a file written
over is whole, the old or the new."""

import numpy as np
import pytest
import spacy

from spacy_elmo.pipeline import saved_model
from spacy_elmo.pipeline.saved_model import load_model_bytes, replace_file
from tests.support.pipelines import elmo_config

TEXT = "She sat on the bank ."


def _component(pooling):
    nlp = spacy.blank("en")
    elmo = nlp.add_pipe("elmo", config={**elmo_config(), "pooling": pooling})
    nlp.initialize()
    return nlp, elmo


def test_a_model_saved_without_its_pooling_node_loads_the_biLMs_weights():
    nlp, elmo = _component("top")
    expected = nlp(TEXT)._.elmo["vectors"]
    with saved_model._pooling_detached(elmo.model):
        data = elmo.model.to_bytes()  # as 0.1 saved it: the biLM alone
    other_nlp, other = _component("top")
    for parameter in other.model.layers[0].shims[0]._model.parameters():  # other weights until loaded
        parameter.data.mul_(2.0)
    assert not np.array_equal(other_nlp(TEXT)._.elmo["vectors"], expected)
    load_model_bytes(other.model, other.pooling, data)
    np.testing.assert_array_equal(other_nlp(TEXT)._.elmo["vectors"], expected)
    assert len(other.model.layers) == 2  # the pooling node is back


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
