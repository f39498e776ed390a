"""`BiLM.embed`'s loop (elmo/nn/bulk.py): the output choices equal the same reduction of all layers, a token
budget bounds every batch the biLM is given, and a batch out of device memory is halved and the call
goes on, down to one sentence, then an error naming it (the error injected, so the path runs on a CPU)."""

import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import InputError
from spacy_elmo.elmo.nn import bulk
from spacy_elmo.elmo.nn.errors import DeviceMemoryError
from tests.support.paths import TINY_MODEL

SENTENCES = [s.split() for s in ["The bank rose .", "Hi !", "", "She sat on the bank of the river .", "a b c"]]


@pytest.fixture(scope="module")
def bilm():
    return load_bilm(TINY_MODEL)


@pytest.fixture
def given(bilm, monkeypatch):
    """The sentence batches the biLM is given; batches of more than `given.fits` sentences (if set) raise
    torch.OutOfMemoryError, as CUDA does."""
    calls = []
    real = bilm.forward_sentences

    def forward_sentences(sentences, **kwargs):
        calls.append([len(s) for s in sentences])
        if forward_sentences.fits is not None and len(sentences) > forward_sentences.fits:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(sentences, **kwargs)

    forward_sentences.fits = None
    forward_sentences.calls = calls
    monkeypatch.setattr(bilm, "forward_sentences", forward_sentences)
    return forward_sentences


@pytest.mark.parametrize(
    "layers,weights",
    [("top", [0.0, 0.0, 1.0]), ("average", [1 / 3] * 3), ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5])],
)
def test_each_choice_is_that_reduction_of_all_layers(bilm, layers, weights):
    full = bilm.embed(SENTENCES)
    mixed = bilm.embed(SENTENCES, layers=layers)
    pooled = bilm.embed(SENTENCES, layers=layers, pool="mean")
    for everything, mix, vector, words in zip(full, mixed, pooled, SENTENCES):
        expected = np.einsum("l,lnd->nd", weights, everything)
        assert mix.shape == (len(words), bilm.output_dim) and mix.dtype == np.float32
        np.testing.assert_allclose(mix, expected, rtol=0, atol=1e-6)
        mean = expected.mean(axis=0) if words else np.zeros(bilm.output_dim)
        np.testing.assert_allclose(vector, mean, rtol=0, atol=1e-6)
    all_pooled = bilm.embed(SENTENCES, pool="mean")
    np.testing.assert_allclose(all_pooled[0], full[0].mean(axis=1), rtol=0, atol=1e-6)
    assert all_pooled[2].shape == (bilm.n_layers, bilm.output_dim)


def test_a_token_budget_bounds_every_batch_and_changes_no_vector(bilm, given):
    expected = bilm.embed(SENTENCES, batch_size=1)
    given.calls.clear()
    out = bilm.embed(SENTENCES, max_batch_tokens=9)
    assert given.calls and all(len(c) * max(c) <= 9 for c in given.calls)
    assert sum(len(c) for c in given.calls) == 4  # the empty sentence skips the biLM
    for a, b in zip(out, expected):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    given.calls.clear()
    bilm.embed(SENTENCES, batch_size=2)
    assert [len(c) for c in given.calls] == [2, 2]


def test_a_batch_out_of_memory_is_halved_and_the_call_goes_on(bilm, given):
    expected = bilm.embed(SENTENCES)
    given.fits = 1
    given.calls.clear()
    out = bilm.embed(SENTENCES)
    # lengths 9 4 3 2: the 4 fail, then [9, 4], halved; [3, 2] is smaller than [9, 4]'s half, so tried
    assert [len(c) for c in given.calls] == [4, 2, 1, 1, 2, 1, 1]
    for a, b in zip(out, expected):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_after_one_out_of_memory_larger_batches_are_halved_before_trying(bilm, given):
    given.fits = 2
    given.calls.clear()
    bilm.embed([["w"] * 3] * 8, batch_size=4)
    assert [len(c) for c in given.calls] == [4, 2, 2, 2, 2]


def test_one_sentence_out_of_memory_is_named_with_the_fix(bilm, given):
    given.fits = 0
    with pytest.raises(DeviceMemoryError, match=r"sentence 3 \(9 tokens\) does not fit in GPU memory even alone"):
        bilm.embed(SENTENCES)
    with pytest.raises(DeviceMemoryError, match="stateful batch starting at sentence 0.*smaller batch size"):
        bilm.embed(SENTENCES, stateful=True)


def test_bad_budgets_are_named(bilm):
    with pytest.raises(InputError, match="max_batch_tokens must be an integer of at least 1 or None, got 0"):
        bilm.embed(SENTENCES, max_batch_tokens=0)
    for name, value in [("batch_size", None), ("batch_size", 2.5), ("batch_size", True), ("max_batch_tokens", "")]:
        with pytest.raises(InputError, match=f"{name} must be an integer of at least 1"):
            bilm.embed(SENTENCES, **{name: value})
    with pytest.raises(InputError, match="drop max_batch_tokens"):
        bilm.embed(SENTENCES, stateful=True, max_batch_tokens=10)
    assert bulk.NO_TOKEN_BUDGET > 10**15


@pytest.mark.parametrize(
    "sentences, message",
    [
        (None, "a list of sentences, each a list of tokens, got None"),
        (5, "got 5"),
        ([["a"], None], "sentence 1 is None"),
        ([["a", 3]], "sentence 0 is \\['a', 3\\]"),
    ],
)
def test_sentences_that_are_no_lists_of_token_strings_are_named(bilm, sentences, message):
    with pytest.raises(InputError, match=f"embed takes .*{message}"):
        bilm.embed(sentences)
