"""The `elmo` factory (pipeline/factory.py): found through spaCy's entry point, its settings checked when
the pipeline is built, not at the first doc."""

import pytest
import spacy
from spacy.util import registry

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.pipeline.factory import make_elmo
from tests.support.pipelines import elmo_config


def test_spacy_finds_the_factory_by_its_entry_point():
    assert registry.factories.get("elmo") is make_elmo


@pytest.mark.parametrize("setting", [{"store_layers": "int8"}, {"cache_mb": -1}, {"pooling": [1e39, 1.0, 1.0]}])
def test_a_bad_setting_is_refused_when_the_pipeline_is_built(setting):
    with pytest.raises(ElmoError):
        spacy.blank("en").add_pipe("elmo", config={**elmo_config(), **setting})
