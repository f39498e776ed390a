"""The `[paths]` a config is given that name the biLM are read by it (pipeline/model_paths.py): spaCy
would accept an unknown override without a word and run another model."""

import pytest
from spacy.training import Example
from spacy.util import load_config, load_model_from_config

from spacy_elmo.elmo.errors import InputError
from spacy_elmo.pipeline.model_paths import check_model_paths_read
from tests.support.paths import CONFIGS, FIXTURES


@pytest.mark.parametrize(
    "config, overrides",
    [
        (CONFIGS / "tagger_elmo.cfg", {"paths.elmo_options": "o.json", "paths.elmo_weights": "w.hdf5"}),
        (FIXTURES / "configs" / "tagger_elmo_v2.cfg", {"paths.elmo_model": "fixture-tiny"}),
    ],
)
@pytest.mark.parametrize("interpolate", [False, True])
def test_a_model_path_the_config_does_not_read_is_refused_at_initialize(config, overrides, interpolate):
    """spaCy adds an unknown `[paths]` override without a word: v2's files given to a v3 config (the
    shipped ones), or v3's model to a v2 config, would leave another model running."""
    nlp = load_model_from_config(load_config(config, overrides=overrides, interpolate=interpolate), auto_fill=True)
    key = next(iter(overrides))
    with pytest.raises(InputError, match=f"{key} = .*nothing in this config reads it.* as --paths.elmo_model"):
        nlp.initialize(lambda: [Example.from_dict(nlp.make_doc("A b ."), {"tags": ["D", "N", "P"]})])


@pytest.mark.parametrize("interpolate", [False, True])
def test_the_model_paths_a_config_reads_pass(interpolate):
    overrides = {"paths.elmo_model": "fixture-tiny"}
    nlp = load_model_from_config(load_config(CONFIGS / "tagger_elmo.cfg", overrides, interpolate), auto_fill=True)
    check_model_paths_read(nlp)
