"""The Ray Data callable (elmo/embed/ray_data.py), called as Ray calls it, with plain column dicts: each row
gains its sentence's layers, or one pooled vector per token; the other columns are kept."""

import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.embed.ray_data import ElmoBatchMapper
from spacy_elmo.elmo.errors import ElmoError
from tests.support.paths import TINY_MODEL

BATCH = {"tokens": [np.array(["The", "bank", "."]), np.array(["Hi", "!"])], "id": np.array([7, 8])}


def test_rows_gain_their_layers_and_keep_their_columns():
    out = ElmoBatchMapper(model=str(TINY_MODEL), device="cpu")(BATCH)
    expected = load_bilm(TINY_MODEL).embed([["The", "bank", "."], ["Hi", "!"]])
    assert out["id"].tolist() == [7, 8] and out["tokens"] is BATCH["tokens"]
    for got, want in zip(out["elmo"], expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_pooling_gives_one_vector_per_token_under_the_output_name():
    embedder = ElmoBatchMapper(model=str(TINY_MODEL), column="tokens", output="vectors", pooling="top", device="cpu")
    out = embedder(BATCH)
    layers = load_bilm(TINY_MODEL).embed([["The", "bank", "."]])[0]
    assert out["vectors"][0].shape == layers.shape[1:] and out["vectors"][0].dtype == np.float32
    np.testing.assert_allclose(out["vectors"][0], layers[-1], rtol=0, atol=1e-6)


def test_a_bad_pooling_is_named_before_the_model_loads():
    with pytest.raises(ElmoError, match="pooling 'max'"):
        ElmoBatchMapper(model="no-such-model", pooling="max")


def test_the_old_name_says_the_new_one():
    """The callable was `ElmoEmbedder`, AllenNLP's name for another class: the old name names both."""
    with pytest.raises(ImportError, match="now ElmoBatchMapper.*spacy_elmo.allennlp.ElmoEmbedder"):
        from spacy_elmo.elmo.embed import ElmoEmbedder  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        import spacy_elmo.elmo.embed as embed

        embed.Nothing  # noqa: B018
