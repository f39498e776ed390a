"""A pipeline's settings, from a .cfg or Python: refused by name when the pipeline is built (a quoted
number, a number beyond float32's range, a registered function that is no segmenter), never at the
first doc with a raw error or as inf vectors; and, for a saved pipeline, those of the config it is loaded
with, while its weights come from disk."""

import numpy as np
import pytest
import spacy
import torch
from thinc.api import Config

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.pipeline.layers.scalar_mix import build_scalar_mix_v2
from tests.support.paths import TINY_MODEL
from tests.support.pipelines import EXACT_LAYERS, elmo_config

PIPELINE = """
[nlp]
lang = "en"
pipeline = ["elmo", "tagger"]

[components]

[components.elmo]
factory = "elmo"
cache_mb = 1024

[components.elmo.model]
@architectures = "spacy-elmo.BiLM.v3"
model = "fixture-tiny"
max_batch_tokens = 4096

[components.elmo.model.segmentation]
@misc = "spacy-elmo.sentence_windows.v1"
max_length = 256
overlap = 32

[components.tagger]
factory = "tagger"

[components.tagger.model]
@architectures = "spacy.Tagger.v2"

[components.tagger.model.tok2vec]
@architectures = "spacy-elmo.ElmoListener.v1"
width = 64

[components.tagger.model.tok2vec.mix]
@layers = "spacy-elmo.ScalarMix.v2"
dropout = 0.1
gamma = 1.0
"""
TEXT = "She went to the bank to withdraw money ."


def _load(text):
    return spacy.util.load_model_from_config(Config().from_str(text), auto_fill=True)


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "max_batch_tokens = 4096",
            "spacy-elmo.BiLM.v3: 'max_batch_tokens' must be an integer of at least 1, got '4096'",
        ),
        (
            "cache_mb = 1024",
            "the elmo component: 'cache_mb' must be a whole number of MiB, 0 (no cache) or more, got '1024'",
        ),
        (
            "max_length = 256",
            "spacy-elmo.sentence_windows.v1: 'max_length' must be an integer of at least 1, got '256'",
        ),
        ("overlap = 32", "spacy-elmo.sentence_windows.v1: 'overlap' must be an integer >= 0, got '32'"),
        ("dropout = 0.1", "spacy-elmo.ScalarMix.v2: 'dropout' must be a number in [0, 1), got '0.1'"),
        ("width = 64", "spacy-elmo.ElmoListener.v1: 'width' must be a valid integer, got '64'"),
    ],
)
def test_a_quoted_number_in_a_cfg_is_refused_by_name_when_the_pipeline_is_built(line, message):
    key, value = line.split(" = ")
    assert line in PIPELINE
    _load(PIPELINE)  # the config as written builds
    with pytest.raises(ElmoError) as caught:
        _load(PIPELINE.replace(line, f'{key} = "{value}"'))
    assert str(caught.value) == f"{message}; write the number without quotes"


@pytest.mark.parametrize(
    "line, message",
    [
        ("gamma = 1.0", "spacy-elmo.ScalarMix.v2: 'gamma' must be a finite number within float32's range"),
        ("dropout = 0.1", "spacy-elmo.ScalarMix.v2: 'dropout' must be a number in [0, 1), got 1e+39"),
    ],
)
def test_a_number_beyond_float32_in_a_cfg_is_refused_by_name(line, message):
    key, _ = line.split(" = ")
    with pytest.raises(ElmoError) as caught:
        _load(PIPELINE.replace(line, f"{key} = 1e39"))
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    "pooling, message",
    [
        ([1e39, 0.0, 0.0], "pooling weights must be finite numbers within float32's range"),
        ({"@layers": "spacy-elmo.Pooling.v1", "weights": [0.0, -1e39, 0.0]}, "pooling weights must be finite"),
        ({"@layers": "spacy-elmo.ScalarMix.v2", "gamma": 1e39}, "'gamma' must be a finite number within float32"),
        ({"@layers": "spacy-elmo.ScalarMix.v2", "weights": [1e39, 0, 0]}, "'weights\\[0\\]' must be within float32"),
    ],
)
def test_pooling_numbers_beyond_float32_are_refused_when_the_pipeline_is_built(pooling, message):
    with pytest.raises(ElmoError, match=message):
        spacy.blank("en").add_pipe("elmo", config={**elmo_config(), "pooling": pooling})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1e39])
def test_non_finite_mix_settings_given_in_python_are_refused(value):
    with pytest.raises(ElmoError, match="'gamma' must be a finite number within float32's range"):
        build_scalar_mix_v2(gamma=value)
    with pytest.raises(ElmoError, match="'weights\\[1\\]' must be"):
        build_scalar_mix_v2(weights=[0.0, value, 0.0])


@pytest.mark.parametrize(
    "segmentation, got",
    [
        ({"@misc": "spacy.first_longest_spans_filter.v1"}, "function 'filter_chain_spans', which takes Iterable"),
        ({"@misc": "spacy.ngram_suggester.v1", "sizes": [1]}, "partial 'ngram_suggester', which cannot be called"),
        ({"@loggers": "spacy.ConsoleLogger.v1"}, "setup_printer', which takes Language first"),
        ({"@layers": "spacy-elmo.Pooling.v1"}, "the thinc layer 'elmo-pooling', which takes"),
    ],
)
def test_a_foreign_registry_entry_as_segmentation_is_refused_when_the_pipeline_is_built(segmentation, got):
    with pytest.raises(ElmoError) as caught:
        spacy.blank("en").add_pipe("elmo", config=elmo_config(segmentation=segmentation))
    message = str(caught.value)
    assert message.startswith("spacy-elmo.BiLM: 'segmentation' must be a Segmenter") and got in message


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A saved pipeline with the default settings (mean pooling, cold start, no doc.tensor) but float32
    layers, which the tests compare with the biLM's."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={**elmo_config(), **EXACT_LAYERS})
    nlp.initialize()
    path = tmp_path_factory.mktemp("saved") / "pipeline"
    nlp.to_disk(path)
    return path


def _loaded(path, **elmo):
    return spacy.load(path, config={"components": {"elmo": elmo}})(TEXT)


@pytest.mark.parametrize("pooling, layer", [("top", 2), ([0.0, 1.0, 0.0], 1)])
def test_a_saved_pipeline_pools_as_the_config_it_is_loaded_with_says(saved, pooling, layer):
    doc = _loaded(saved, pooling=pooling)
    np.testing.assert_array_equal(doc._.elmo["vectors"], doc._.elmo["layers"][layer])


def test_a_saved_pipeline_loaded_with_another_kind_of_pooling_uses_the_configs(saved, tmp_path):
    """The saved mean pooling is one layer, an aligned pooling three: the config's is built, not read."""
    torch.save(2 * torch.eye(32), tmp_path / "alignment.pth")
    aligned = {
        "@layers": "spacy-elmo.AlignedPooling.v1",
        "alignment": str(tmp_path / "alignment.pth"),
        "weights": "top",
    }
    doc = _loaded(saved, pooling=aligned)
    np.testing.assert_allclose(doc._.elmo["vectors"], 2 * doc._.elmo["layers"][-1], atol=1e-6)


def test_a_saved_pipeline_starts_warm_or_cold_as_the_config_it_is_loaded_with_says(saved, tmp_path):
    words = TEXT.split()
    warm, cold = (load_bilm(TINY_MODEL, warm_start=w).embed([words])[0] for w in (True, False))
    assert not np.allclose(warm, cold, atol=1e-3)
    doc = _loaded(saved, model={"warm_start": True})
    np.testing.assert_allclose(doc._.elmo["layers"], warm, atol=1e-6)
    spacy.load(saved, config={"components": {"elmo": {"model": {"warm_start": True}}}}).to_disk(tmp_path / "warm")
    np.testing.assert_allclose(_loaded(tmp_path / "warm")._.elmo["layers"], warm, atol=1e-6)
    np.testing.assert_allclose(
        _loaded(tmp_path / "warm", model={"warm_start": False})._.elmo["layers"], cold, atol=1e-6
    )


def test_an_edited_config_cfg_of_a_saved_pipeline_is_the_one_that_runs(saved, tmp_path):
    import shutil

    edited = tmp_path / "edited"
    shutil.copytree(saved, edited)
    config = (edited / "config.cfg").read_text(encoding="utf8")
    for old, new in [('pooling = "mean"', 'pooling = "top"'), ("set_tensor = false", "set_tensor = true")]:
        assert old in config
        config = config.replace(old, new)
    (edited / "config.cfg").write_text(config, encoding="utf8")
    nlp = spacy.load(edited)
    assert nlp.config["components"]["elmo"]["pooling"] == "top"
    doc = nlp(TEXT)
    np.testing.assert_array_equal(doc._.elmo["vectors"], doc._.elmo["layers"][-1])
    np.testing.assert_array_equal(doc.tensor, doc._.elmo["vectors"])
    assert "layers" not in _loaded(saved, store_layers=False)._.elmo
