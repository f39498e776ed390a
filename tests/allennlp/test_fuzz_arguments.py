"""The AllenNLP face's entry points under random arguments (hypothesis): token lists of any text (empty
strings, control characters, emoji, tokens beyond 48 bytes) with strings mixed in where lists go,
character-id tensors of any dtype, shape and value, mix weights of any float. The property: the
correct result or the package's error, never another exception."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as npst

from spacy_elmo.allennlp import Elmo, ElmoEmbedder, ScalarMix, batch_to_ids
from spacy_elmo.elmo.errors import ElmoError
from tests.support.properties import PROPERTY_SETTINGS

TOKENS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["", "🙂", "👩‍🔬", "\u200b", "\x00", "e\u0301", "a b", "<S>", "</S>"]),
    st.text(min_size=49, max_size=80),  # beyond ELMo's 48 bytes per token
)
SENTENCES = st.lists(TOKENS, max_size=6)
# Mostly token lists, sometimes a string where one goes: the batch, or a sentence in it.
BATCHES = st.one_of(st.lists(st.one_of(SENTENCES, SENTENCES, SENTENCES, st.text(max_size=8)), max_size=4), st.text())
ID_DTYPES = st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.float32, np.bool_])
ID_SHAPES = st.one_of(
    npst.array_shapes(min_dims=3, max_dims=4, min_side=0, max_side=3).map(lambda shape: (*shape[:-1], 50)),
    npst.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=51),
)
MIX_VALUES = st.floats(allow_nan=True, allow_infinity=True, width=64)


@pytest.fixture(scope="module")
def elmo(fixture_paths):
    """Stateless, the mean of the layers: its output is `load_bilm`'s mean, sentence by sentence."""
    return Elmo(*fixture_paths, 1, dropout=0.0, scalar_mix_parameters=[0.0, 0.0, 0.0], stateful=False).eval()


@pytest.fixture(scope="module")
def embedder(fixture_paths):
    return ElmoEmbedder(*fixture_paths, stateful=False)


def is_token_lists(batch) -> bool:
    return not isinstance(batch, str) and not any(isinstance(sentence, str) for sentence in batch)


def outcome(call):
    """The call's result, or None for the package's error; any other exception fails the test."""
    try:
        return call()
    except ElmoError:
        return None


@PROPERTY_SETTINGS
@given(batch=BATCHES)
def test_elmo_on_any_batch_is_load_bilms_mean_or_a_package_error(elmo, fixture_bilm, batch):
    out = outcome(lambda: elmo(batch_to_ids(batch)))
    assert (out is None) == (not is_token_lists(batch))
    if out is None:
        return
    longest = max(map(len, batch), default=0)
    representation = out["elmo_representations"][0].detach().numpy()
    assert representation.shape == (len(batch), longest, 32)
    assert out["mask"].sum(dim=1).tolist() == [len(sentence) for sentence in batch]
    for row, layers in zip(representation, fixture_bilm.embed(batch)):
        np.testing.assert_allclose(row[: layers.shape[1]], layers.mean(axis=0), atol=1e-5, rtol=1e-5)


@PROPERTY_SETTINGS
@given(batch=BATCHES)
def test_embedder_on_any_batch_is_load_bilms_or_a_package_error(embedder, fixture_bilm, batch):
    sentence = batch[0] if len(batch) else []
    calls = {
        "embed_batch": (batch, lambda: embedder.embed_batch(batch)),
        "embed_sentences": (batch, lambda: list(embedder.embed_sentences(batch, batch_size=2))),
        "embed_sentence": ([sentence], lambda: [embedder.embed_sentence(sentence)]),
    }
    for name, (sentences, call) in calls.items():
        got = outcome(call)
        assert (got is None) == (not is_token_lists(sentences)), name
        if got is not None:
            assert len(got) == len(sentences)
            for layers, want in zip(got, fixture_bilm.embed(sentences)):
                np.testing.assert_allclose(layers, want, atol=1e-5, rtol=1e-5, err_msg=name)


@st.composite
def id_arrays(draw):
    """Arrays of any of the dtypes NumPy hands torch, mostly of Elmo's shape, with ids mostly in range."""
    dtype = np.dtype(draw(ID_DTYPES))
    shape = draw(ID_SHAPES)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        elements = st.integers(max(int(info.min), -3), min(int(info.max), 270))
        return draw(npst.arrays(dtype, shape, elements=elements))
    return draw(npst.arrays(dtype, shape))


@PROPERTY_SETTINGS
@given(ids=id_arrays())
def test_elmo_on_any_id_tensor_gives_its_shapes_or_a_package_error(elmo, ids):
    out = outcome(lambda: elmo(torch.from_numpy(ids)))
    in_range = ids.size == 0 or (ids.dtype.kind in "iu" and 0 <= ids.min() and ids.max() <= 261)
    valid = ids.dtype.kind in "iu" and ids.ndim >= 3 and ids.shape[-1] == 50 and in_range
    assert (out is None) == (not valid)
    if out is not None:
        assert out["elmo_representations"][0].shape == (*ids.shape[:-1], 32)
        assert out["mask"].shape == ids.shape[:-1]
        assert torch.isfinite(out["elmo_representations"][0]).all()


@PROPERTY_SETTINGS
@given(values=st.lists(MIX_VALUES, min_size=2, max_size=4))
def test_any_mix_weights_give_finite_vectors_or_a_package_error(values):
    mix = outcome(lambda: ScalarMix(3, initial_scalar_parameters=values))
    with np.errstate(over="ignore"):
        within = np.isfinite(np.asarray(values, dtype=np.float32)).all()
    assert (mix is None) == (len(values) != 3 or not within)
    if mix is not None:
        layers = [torch.randn(2, 3, 4) for _ in range(3)]
        assert torch.isfinite(mix(layers)).all()
