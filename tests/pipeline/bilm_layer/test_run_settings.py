"""The biLM layer's run settings follow the config a pipeline is loaded with, never the values saved with
it: a saved pipeline served with another `fast_mode` or `max_batch_tokens` (overridden in `spacy.load`)
runs with them; the saved bytes still record the settings."""

import numpy as np
import pytest
import spacy
import srsly

from spacy_elmo.pipeline.bilm_layer.run_settings import RUN_SETTINGS, RunSettings
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import run_settings
from tests.support.pipelines import elmo_config

TEXT = "The bank of the river was steep. She paid the money into the bank."


def vectors(nlp):
    return np.stack([token.vector for token in nlp(TEXT)])


def bilm_layer(nlp):
    return next(node for node in nlp.get_pipe("elmo").model.walk() if RUN_SETTINGS in node.attrs)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.initialize()
    path = tmp_path_factory.mktemp("saved") / "pipeline"
    nlp.to_disk(path)
    return path, vectors(nlp)


def test_settings_overridden_when_a_saved_pipeline_loads_are_the_ones_it_runs_with(saved):
    path, exact = saved
    changed = {"fast_mode": "int8", "max_batch_tokens": 7, "tf32": True}
    nlp = spacy.load(path, config={"components": {"elmo": {"model": changed}}})
    assert run_settings(bilm_layer(nlp)) == RunSettings(stateful=False, max_batch_tokens=7, fast_mode="int8", tf32=True)
    int8 = vectors(nlp)
    assert not np.array_equal(int8, exact), "the int8 copy must have run"
    np.testing.assert_allclose(int8, exact, atol=0.5)
    assert run_settings(bilm_layer(spacy.load(path))).fast_mode is None


def test_a_saved_pipeline_runs_the_time_loop_of_the_config_it_is_loaded_with(saved):
    path, _ = saved
    nlp = spacy.load(path, config={"components": {"elmo": {"model": {"time_loop": "wavefront"}}}})
    assert run_settings(bilm_layer(nlp)).time_loop == "wavefront"
    assert run_settings(bilm_layer(spacy.load(path))).time_loop == "auto"


def test_the_saved_bytes_record_the_settings_they_were_saved_with(saved):
    path, _ = saved
    nlp = spacy.load(path, config={"components": {"elmo": {"model": {"max_batch_tokens": 9}}}})
    layer = bilm_layer(nlp)
    index = next(i for i, node in enumerate(nlp.get_pipe("elmo").model.walk()) if node is layer)
    recorded = nlp.get_pipe("elmo").model.to_dict()["attrs"][index][RUN_SETTINGS]
    assert srsly.msgpack_loads(recorded)["max_batch_tokens"] == 9
