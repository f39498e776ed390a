"""The biLMs shipped inside the package load with no download and give sensible vectors."""

import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.models import DEFAULT_MODEL, bundled_model_paths, bundled_models


def test_default_model_is_bundled():
    assert DEFAULT_MODEL in bundled_models()


@pytest.mark.parametrize("name", sorted(bundled_models()))
def test_bundled_model_loads_and_embeds(name):
    options, weights = bundled_model_paths(name)
    assert (options.parent / "README.md").exists(), "every bundled model says where it comes from"
    bilm = load_bilm(options, weights)
    money, river = bilm.embed(["went to the bank to withdraw money".split(), "sat on the bank of the river".split()])
    assert money.shape == (bilm.n_layers, 7, bilm.output_dim)
    assert np.isfinite(money).all()
    np.testing.assert_array_equal(money[0, 3], river[0, 3])
    assert np.abs(money[1:, 3] - river[1:, 3]).max() > 1e-3


def test_unknown_bundled_model_is_a_clear_error():
    with pytest.raises(ValueError, match="no bundled ELMo model named 'nope'"):
        bundled_model_paths("nope")
