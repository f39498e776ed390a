"""The elmo component's `to_disk`: a failure mid-write keeps the previous files whole, a pipeline saved
before `initialize()` or first use carries its weights, and a saved biLM of another width than the
listening components were built for is refused when the pipeline loads."""

import shutil

import numpy as np
import pytest
import spacy
from spacy.training import Example
from thinc.api import Model

from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.sources import bundled_model_paths
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import set_bilm
from spacy_elmo.pipeline.errors import SavedWeightsError
from tests.support.pipelines import elmo_config, narrow_bilm, tiny_tagger_pipeline

TEXT = "The bank raised its rates ."
TINY = elmo_config()


def test_a_write_cut_short_keeps_the_saved_model(tmp_path, monkeypatch):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=TINY)
    nlp.initialize()
    nlp.to_disk(tmp_path)
    saved = {name: (tmp_path / "elmo" / name).read_bytes() for name in ("model", "pooling", "cfg")}

    def crash(self):
        raise KeyboardInterrupt("killed while the model's bytes were being written")

    monkeypatch.setattr(Model, "to_bytes", crash)
    with pytest.raises(KeyboardInterrupt):
        nlp.to_disk(tmp_path)
    monkeypatch.undo()
    assert {name: (tmp_path / "elmo" / name).read_bytes() for name in saved} == saved
    assert sorted(p.name for p in (tmp_path / "elmo").iterdir()) == ["cfg", "model", "pooling"]  # no temp file left
    np.testing.assert_array_equal(spacy.load(tmp_path)(TEXT)._.elmo["vectors"], nlp(TEXT)._.elmo["vectors"])


@pytest.fixture
def movable_weights(tmp_path):
    """A copy of the tiny model's files, which the test deletes after saving."""
    source = tmp_path / "source"
    source.mkdir()
    for path in bundled_model_paths("fixture-tiny"):
        shutil.copy(path, source / path.name)
    return source


def _pipeline_on(source):
    nlp = spacy.blank("en")
    config = elmo_config(options=str(source / "options.json"), weights=str(source / "weights.hdf5"))
    nlp.add_pipe("elmo", config=config)
    return nlp


def test_to_disk_before_initialize_carries_the_weights(tmp_path, movable_weights):
    _pipeline_on(movable_weights).to_disk(tmp_path / "saved")  # no initialize(), no doc processed
    shutil.rmtree(movable_weights)
    expected = spacy.blank("en")
    expected.add_pipe("elmo", config=TINY)
    np.testing.assert_array_equal(
        spacy.load(tmp_path / "saved")(TEXT)._.elmo["vectors"], expected(TEXT)._.elmo["vectors"]
    )


def test_to_bytes_before_initialize_carries_the_weights(movable_weights):
    data = _pipeline_on(movable_weights).to_bytes()
    loaded = _pipeline_on(movable_weights).from_bytes(data)
    shutil.rmtree(movable_weights)
    expected = spacy.blank("en")
    expected.add_pipe("elmo", config=TINY)
    np.testing.assert_array_equal(loaded(TEXT)._.elmo["vectors"], expected(TEXT)._.elmo["vectors"])


def test_to_disk_refuses_clearly_when_the_weights_are_already_gone(tmp_path, movable_weights):
    nlp = _pipeline_on(movable_weights)
    (movable_weights / "weights.hdf5").unlink()
    with pytest.raises(InputFileError, match="weights file .*weights.hdf5 does not exist"):
        nlp.to_disk(tmp_path / "saved")
    assert not (tmp_path / "saved" / "elmo").exists()


def test_a_pipeline_saved_before_the_pooling_was_kept_loads(tmp_path):
    """Its `model` holds the biLM alone and no file holds the pooling: it stays as its config builds it."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=TINY)
    nlp.initialize()
    nlp.to_disk(tmp_path)
    model = nlp.get_pipe("elmo").model
    pooling, model.layers[1:] = model.layers[1:], []
    (tmp_path / "elmo" / "model").write_bytes(model.to_bytes())
    model.layers[1:] = pooling
    np.testing.assert_array_equal(spacy.load(tmp_path)(TEXT)._.elmo["vectors"], nlp(TEXT)._.elmo["vectors"])


def test_an_elmo_model_of_another_width_is_refused_at_load_naming_both_widths(tmp_path):
    """Another model size's `elmo/model` copied into a saved pipeline once loaded and failed at the first
    doc, inside a matrix product of the tagger's."""
    nlp = tiny_tagger_pipeline(frozen=True)
    example = Example.from_dict(nlp.make_doc("a b c"), {"tags": ["N", "V", "N"]})
    nlp.initialize(lambda: [example])
    nlp.to_disk(tmp_path / "pipeline")
    other = spacy.blank("en")
    elmo = other.add_pipe("elmo", config=TINY)
    set_bilm(elmo.model, narrow_bilm())
    other.to_disk(tmp_path / "other")
    shutil.copy(tmp_path / "other" / "elmo" / "model", tmp_path / "pipeline" / "elmo" / "model")
    with pytest.raises(SavedWeightsError, match="'tagger' listens for 32-wide layers, .* biLM gives 16-wide ones"):
        spacy.load(tmp_path / "pipeline")
