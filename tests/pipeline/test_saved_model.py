"""The elmo component's saved model (spacy_elmo/pipeline/saved_model.py): a model saved with another
kind of pooling than the config builds loads the biLM's weights, the pooling's settings stay the
config's, a file written over is whole, the old or the new, and a changed, cut-short, foreign or
other-width `elmo/model` is a SavedWeightsError naming the saved pipeline and the file."""

import re

import numpy as np
import pytest
import spacy
import srsly

from spacy_elmo.pipeline.bilm_layer.thinc_bilm import set_bilm
from spacy_elmo.pipeline.errors import SavedWeightsError
from spacy_elmo.pipeline.saved_model import load_model_bytes, load_pooling_bytes, model_bytes, replace_file
from tests.support.pipelines import elmo_config, narrow_bilm

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
    load_model_bytes(other.model, model_bytes(elmo.model))
    load_pooling_bytes(other.pooling, model_bytes(elmo.pooling))
    np.testing.assert_array_equal(other_nlp(TEXT)._.elmo["layers"], expected)
    assert next(other.pooling.walk()).name != next(elmo.pooling.walk()).name  # the configured kind stays


def test_the_pooling_keeps_the_attrs_it_was_built_with():
    _, saved = _component("top")
    _, loaded = _component("top")
    node = next(loaded.pooling.walk())
    node.attrs["marker"] = "configured"
    load_pooling_bytes(loaded.pooling, model_bytes(saved.pooling))
    assert next(loaded.pooling.walk()).attrs["marker"] == "configured"


def test_a_file_written_over_is_the_old_one_when_writing_fails(tmp_path, monkeypatch):
    path = tmp_path / "model"
    replace_file(path, b"old")
    monkeypatch.setattr(type(path), "write_bytes", lambda self, data: (_ for _ in ()).throw(OSError("full")))
    with pytest.raises(OSError):
        replace_file(path, b"new")
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["model"]


def _saved_pipeline(tmp_path, nlp):
    nlp.to_disk(tmp_path / "pipeline")
    return tmp_path / "pipeline", tmp_path / "pipeline" / "elmo" / "model"


def test_a_changed_byte_after_saving_fails_the_digest_naming_the_folder_and_file(tmp_path):
    """One byte of the safetensors header, the dtype F32 -> I32: once loaded, vectors off by ~1e9."""
    path, model = _saved_pipeline(tmp_path, _component("mean")[0])
    data = model.read_bytes()
    model.write_bytes(data.replace(b'"F32"', b'"I32"', 1))
    with pytest.raises(SavedWeightsError, match=f"{re.escape(str(path))}/elmo/model: .*sha256.*save the pipeline"):
        spacy.load(path)


@pytest.mark.parametrize("cut", [0, 1, 1000, -1], ids=["empty", "one_byte", "cut_short", "last_byte_lost"])
def test_a_truncated_model_file_is_a_saved_weights_error(tmp_path, cut):
    path, model = _saved_pipeline(tmp_path, _component("mean")[0])
    model.write_bytes(model.read_bytes()[:cut])
    with pytest.raises(SavedWeightsError, match=f"{re.escape(str(path))}/elmo/model: .*does not decode"):
        spacy.load(path)


@pytest.mark.parametrize("foreign", [b"hello world" * 10, srsly.msgpack_dumps([1, 2]), srsly.msgpack_dumps({"a": 1})])
def test_a_foreign_model_file_is_a_saved_weights_error(tmp_path, foreign):
    path, model = _saved_pipeline(tmp_path, _component("mean")[0])
    model.write_bytes(foreign)
    with pytest.raises(SavedWeightsError, match=f"{re.escape(str(path))}/elmo/model: "):
        spacy.load(path)


def test_a_pipeline_saved_before_the_digest_loads(tmp_path):
    nlp, elmo = _component("mean")
    path, model = _saved_pipeline(tmp_path, nlp)
    model.write_bytes(elmo.model.to_bytes())  # thinc's bytes alone, as the component wrote them before
    np.testing.assert_array_equal(spacy.load(path)(TEXT)._.elmo["vectors"], nlp(TEXT)._.elmo["vectors"])


def test_the_digest_covers_the_pooling_too():
    nlp, elmo = _component({"@layers": "spacy-elmo.ScalarMix.v2", "trainable": False, "weights": [1.0, 2.0, 3.0]})
    nlp(TEXT)  # the mix's parameters are made at the first batch
    data = elmo.to_bytes()
    inner = srsly.msgpack_loads(srsly.msgpack_loads(data)["pooling"])["model"]
    weights = np.asarray([1.0, 2.0, 3.0], dtype=np.float32).tobytes()
    assert inner.count(weights) == 1
    changed = np.asarray([1.0, 2.0, 4.0], dtype=np.float32).tobytes()
    with pytest.raises(SavedWeightsError, match="saved elmo pooling.*sha256"):
        spacy.blank("en").add_pipe("elmo", config={**elmo_config(), "pooling": "mean"}).from_bytes(
            data.replace(weights, changed)
        )


def test_a_saved_biLM_of_another_width_is_refused_naming_both_widths():
    _, loaded = _component("mean")
    _, other = _component("mean")
    set_bilm(other.model, narrow_bilm())
    with pytest.raises(SavedWeightsError, match="saved elmo biLM gives 16-wide layers .* gives 32-wide"):
        load_model_bytes(loaded.model, model_bytes(other.model))


def test_the_pooling_is_saved_on_its_own_and_a_missing_part_is_named(tmp_path):
    """A trainable mix's learned weights travel in `elmo/pooling`, beside the biLM layer's `elmo/model`."""
    mix = {"@layers": "spacy-elmo.ScalarMix.v2", "trainable": False, "weights": [1.0, 2.0, 3.0]}
    nlp, elmo = _component(mix)
    nlp(TEXT)
    path, _ = _saved_pipeline(tmp_path, nlp)
    assert (path / "elmo" / "pooling").is_file()
    assert [node.name for node in elmo.model.walk()] == [
        node.name for node in elmo.model.walk() if node is not elmo.pooling
    ]
    np.testing.assert_array_equal(spacy.load(path)(TEXT)._.elmo["vectors"], nlp(TEXT)._.elmo["vectors"])
    (path / "elmo" / "pooling").unlink()
    with pytest.raises(SavedWeightsError, match=f"{re.escape(str(path))}/elmo/pooling cannot be read"):
        spacy.load(path)
