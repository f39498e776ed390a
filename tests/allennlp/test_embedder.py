"""AllenNLP 0.9's `ElmoEmbedder`: its shapes, its state across batches against the TensorFlow
reference (tests/fixtures, see tests/reference for the tolerance), `embed_file`'s HDF5 layout; what it
refuses, and its threads' turns."""

import io
import json

import h5py
import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.allennlp import ElmoEmbedder
from spacy_elmo.elmo.errors import InputError
from tests.support.concurrency import Overlaps, in_threads
from tests.support.paths import ALLENNLP_DIR, BILM_TF_DIR

SENTENCES = ["The cat sat .", "Dogs bark", "A third , longer sentence here ."]
REFERENCES = {
    "elmo-allennlp": (ALLENNLP_DIR, "sentences.json"),
    "elmo-bilm-tf": (BILM_TF_DIR, "lm_embeddings_sentences.json"),
}


@pytest.fixture
def embedder(fixture_paths):
    return ElmoEmbedder(*fixture_paths)


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "input.txt"
    path.write_text("\n".join(SENTENCES) + "\n", encoding="utf8")
    return path


def test_shapes_and_mask(embedder):
    activations, mask = embedder.batch_to_embeddings([s.split() for s in SENTENCES])
    assert activations.shape == (3, 3, 7, 32)
    assert mask.dtype == torch.int64  # 0.9 gave a long mask
    assert mask.tolist() == [[1] * 4 + [0] * 3, [1] * 2 + [0] * 5, [1] * 7]
    assert embedder.embed_sentence(["a", "b"]).shape == (3, 2, 32)
    assert [e.shape for e in embedder.embed_batch([["a"], []])] == [(3, 1, 32), (3, 0, 32)]
    assert embedder.embed_batch([[]])[0].shape == (3, 0, 32)


@pytest.mark.parametrize("name", list(REFERENCES))
def test_the_tensorflow_reference_over_ten_stateful_batches(name):
    """The fixtures were written by the original biLM carrying states across batches, as AllenNLP did."""
    directory, sentence_file = REFERENCES[name]
    embedder = ElmoEmbedder(directory / "options.json", directory / "lm_weights.hdf5")
    sentences = json.loads((directory / sentence_file).read_text())
    for i in range(10):
        batch = [sentences[k][i].split() for k in range(3)]
        for k, layers in enumerate(embedder.embed_batch(batch)):
            with h5py.File(directory / f"lm_embeddings_{k}.hdf5", "r") as f:
                expected = np.concatenate(list(f[str(i)][()]), axis=-1)
            np.testing.assert_allclose(layers[-1], expected, atol=1e-6, rtol=1e-6, err_msg=f"batch {i} row {k}")


def test_stateless_gives_load_bilms_numbers(fixture_paths):
    embedder = ElmoEmbedder(*fixture_paths, stateful=False)
    tokens = [s.split() for s in SENTENCES]
    expected = load_bilm(*fixture_paths).embed(tokens)
    for _ in range(2):  # the second pass starts cold too
        for got, want in zip(embedder.embed_sentences(tokens, batch_size=2), expected):
            np.testing.assert_allclose(got, want, atol=1e-6, rtol=1e-6)


def test_stateful_embedder_carries_states_until_reset(embedder):
    first = embedder.embed_sentence(["a", "b"])
    assert np.abs(embedder.embed_sentence(["a", "b"]) - first).max() > 1e-4
    embedder.reset_states()
    np.testing.assert_array_equal(embedder.embed_sentence(["a", "b"]), first)


@pytest.mark.parametrize("output_format", ["all", "top", "average"])
def test_embed_file_layout(embedder, fixture_paths, text_file, tmp_path, output_format):
    out = tmp_path / "out.hdf5"
    embedder.embed_file(text_file, out, output_format=output_format, batch_size=2)
    expected = list(ElmoEmbedder(*fixture_paths).embed_sentences([s.split() for s in SENTENCES], batch_size=2))
    with h5py.File(out, "r") as f:
        assert set(f) == {"0", "1", "2", "sentence_to_index"}
        assert f["0"].shape == {"all": (3, 4, 32), "top": (4, 32), "average": (4, 32)}[output_format]
        assert json.loads(f["sentence_to_index"][0]) == {s: str(i) for i, s in enumerate(SENTENCES)}
        for i, layers in enumerate(expected):
            want = {"all": layers, "top": layers[-1], "average": layers.mean(axis=0)}[output_format]
            assert f[str(i)].dtype == np.float32
            np.testing.assert_allclose(f[str(i)][()], want, atol=1e-6)


def test_embed_file_keys_by_sentence_or_forgets_them(embedder, tmp_path):
    out = tmp_path / "keys.hdf5"
    embedder.embed_file(io.StringIO("\n".join(SENTENCES)), out, use_sentence_keys=True)
    with h5py.File(out, "r") as f:
        assert set(f) == set(SENTENCES)
        assert f[SENTENCES[1]].shape == (3, 2, 32)
    embedder.embed_file(io.StringIO("\n".join(SENTENCES)), out, forget_sentences=True)
    with h5py.File(out, "r") as f:
        assert set(f) == {"0", "1", "2"}


@pytest.mark.parametrize(
    "text, kwargs, match",
    [
        ("a b\n\nc\n", {}, r"empty lines \(line indexes \[1\]\)"),
        ("a b\na b\n", {"use_sentence_keys": True}, "lines 0 and 1 hold the same sentence"),
        ("a / b\n", {"use_sentence_keys": True}, "cannot be an HDF5 dataset name"),
        ("a b\n", {"output_format": "mean"}, "output_format must be one of all, top, average"),
    ],
)
def test_embed_file_bad_input_writes_nothing(embedder, tmp_path, text, kwargs, match):
    out = tmp_path / "out.hdf5"
    with pytest.raises(InputError, match=match):
        embedder.embed_file(io.StringIO(text), out, **kwargs)
    assert not out.exists()


def test_a_missing_gpu_is_named(fixture_paths):
    with pytest.raises(InputError, match="cuda_device=99"):
        ElmoEmbedder(*fixture_paths, cuda_device=99)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_gpu_gives_the_cpus_numbers(fixture_paths):
    """As tests/device/test_gpu.py: the same weights on a GPU, within its tolerance."""
    tokens = [s.split() for s in SENTENCES]
    on_gpu = ElmoEmbedder(*fixture_paths, cuda_device=0).embed_batch(tokens)
    for got, want in zip(on_gpu, ElmoEmbedder(*fixture_paths).embed_batch(tokens)):
        np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("make", [lambda o: ElmoEmbedder(o, None), lambda o: ElmoEmbedder(options_file=o)])
def test_an_options_file_without_weights_is_refused(fixture_paths, make):
    with pytest.raises(InputError, match=r"without its weight file.*downloaded model's name"):
        make(fixture_paths[0])


def test_a_model_folder_stands_for_both_files(fixture_paths):
    folder = ElmoEmbedder(fixture_paths[0].parent).embed_sentence(["a", "b"])
    np.testing.assert_array_equal(folder, ElmoEmbedder(*fixture_paths).embed_sentence(["a", "b"]))


@pytest.mark.parametrize(
    "call, caller",
    [
        (lambda e: e.embed_sentence("She went to the bank"), "embed_sentence"),
        (lambda e: e.embed_batch(["She went", "to the bank"]), "embed_batch"),
        (lambda e: e.embed_batch([["She"], "went"]), "embed_batch"),
        (lambda e: e.batch_to_embeddings(["She went"]), "batch_to_embeddings"),
        (lambda e: list(e.embed_sentences(["She went", "to the bank"])), "embed_sentences"),
        (lambda e: list(e.embed_sentences("She went to the bank")), "embed_sentences"),
        (lambda e: list(e.embed_sentences("")), "embed_sentences"),
    ],
)
def test_strings_are_refused_where_token_lists_go(embedder, call, caller):
    """As `BiLM.embed`: a string would be read as one token per character."""
    with pytest.raises(InputError, match=f"{caller} takes sentences as lists of tokens.*one token per character"):
        call(embedder)


def test_an_empty_batch_gives_empty_results(embedder):
    assert embedder.embed_batch([]) == []
    activations, mask = embedder.batch_to_embeddings([])
    assert activations.shape == (0, 3, 0, 32) and mask.shape == (0, 0) and mask.dtype == torch.int64


def test_stateful_batches_from_two_threads_take_turns(fixture_paths):
    """As Elmo's calls: the results are a serial run's first and second batches, in some order."""
    batch = [s.split() for s in SENTENCES]
    serial = ElmoEmbedder(*fixture_paths)
    expected = [serial.embed_batch(batch) for _ in range(2)]
    embedder = ElmoEmbedder(*fixture_paths)
    embedder.bilm.forward_sentences = slowed = Overlaps(embedder.bilm.forward_sentences)
    results = in_threads(lambda: embedder.embed_batch(batch))
    assert slowed.most == 1
    first = 0 if np.allclose(results[0][0], expected[0][0]) else 1
    for got, want in zip(results[first] + results[1 - first], expected[0] + expected[1]):
        np.testing.assert_allclose(got, want, atol=1e-6, rtol=1e-6)
