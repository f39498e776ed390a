"""The biLM against activations written by the original TensorFlow biLM (tests/fixtures, see its README).

Tolerance: 1e-6 absolute on every value (`rtol=0`). The largest differences are 9.5e-7 on values near 3
(2 float32 ulps there): the two implementations round differently in sigmoid/tanh and in the order of
the sums, and our layout follows TF's (`x @ W`) so that the sums come out in the same order.

Each test runs once per CPU kernel, pinned (elmo/nn/kernels.py): left to choose per shape, a loaded machine
can time a different winner for each product shape, and a mix of the two libraries' roundings has been
seen 1.2e-6 from the reference, where each library alone stays within 1e-6.
"""

import json

import h5py
import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.nn import kernels
from tests.support.paths import ALLENNLP_DIR, BILM_TF_DIR
from tests.support.tolerance import assert_matches_reference

SETS = {
    "elmo-allennlp": (ALLENNLP_DIR, "sentences.json"),
    "elmo-bilm-tf": (BILM_TF_DIR, "lm_embeddings_sentences.json"),
}


@pytest.fixture(autouse=True, params=[kernels.MKL, kernels.ONEDNN])
def cpu_kernel(request, monkeypatch):
    if request.param == kernels.ONEDNN and not kernels.onednn_available():
        pytest.skip("this torch build has no oneDNN")
    monkeypatch.setenv(kernels.KERNEL_VARIABLE, request.param)
    return request.param


def _load(name):
    directory, sentence_file = SETS[name]
    bilm = load_bilm(directory / "options.json", directory / "lm_weights.hdf5")
    sentences = json.loads((directory / sentence_file).read_text())
    references = []
    for k in range(3):
        with h5py.File(directory / f"lm_embeddings_{k}.hdf5", "r") as f:
            # Stored as [forward half, backward half] of the top layer.
            references.append({int(i): np.concatenate(list(f[i][()]), axis=-1) for i in f})
    return bilm, sentences, references


@pytest.mark.parametrize("name", list(SETS))
def test_top_layer_stateful_over_ten_batches(name):
    bilm, sentences, references = _load(name)
    bilm.reset_states()
    for i in range(10):
        batch = [sentences[k][i].split() for k in range(3)]
        outputs = bilm.embed(batch, stateful=True, batch_size=3)
        for k in range(3):
            assert_matches_reference(outputs[k][-1], references[k][i], err_msg=f"batch {i} row {k}")


@pytest.mark.parametrize("name", list(SETS))
def test_batch_zero_stateless(name):
    bilm, sentences, references = _load(name)
    batch = [sentences[k][0].split() for k in range(3)]
    for k, out in enumerate(bilm.embed(batch)):
        assert_matches_reference(out[-1], references[k][0])


@pytest.mark.parametrize("name", list(SETS))
def test_stateless_later_batches_differ_from_the_stateful_reference(name):
    """The reference really is stateful: without carried state, batch 1 does not match it."""
    bilm, sentences, references = _load(name)
    batch = [sentences[k][1].split() for k in range(3)]
    out = bilm.embed(batch)
    assert np.abs(out[0][-1] - references[0][1]).max() > 1e-3


def test_token_embeddings_of_vocab():
    bilm = load_bilm(ALLENNLP_DIR / "options.json", ALLENNLP_DIR / "lm_weights.hdf5")
    words = (ALLENNLP_DIR / "vocab_test.txt").read_text(encoding="utf8").split("\n")
    with h5py.File(ALLENNLP_DIR / "elmo_token_embeddings.hdf5", "r") as f:
        expected = f["embedding"][()]
    assert len(words) == expected.shape[0]
    assert_matches_reference(bilm.embed_tokens(words), expected)


@pytest.mark.parametrize("name", list(SETS))
def test_layer_zero_is_the_token_embedding_doubled(name):
    bilm, _, _ = _load(name)
    words = (SETS[name][0] / "vocab_test.txt").read_text(encoding="utf8").split()[:40]
    tokens = bilm.embed_tokens(words)
    layers = bilm.embed([words])[0]
    np.testing.assert_array_equal(layers[0], np.concatenate([tokens, tokens], axis=-1))
