"""Long documents: per sentence when the doc has sentence boundaries, windows otherwise (segment.py)."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import registry

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.pipeline.bilm_layer.segment import Segment, segment
from tests.support.pipelines import EXACT_LAYERS, elmo_config


def _pipeline(fixture_paths, **model):
    """A blank pipeline whose `elmo` component reads the fixture biLM; `model` adds or overrides settings."""
    options, weights = fixture_paths
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "elmo",
        config={**elmo_config(options=str(options), weights=str(weights), **model), **EXACT_LAYERS, "pooling": "top"},
    )
    return nlp


def _nlp(fixture_paths, **segmentation):
    return _pipeline(fixture_paths, segmentation={"@misc": "spacy-elmo.sentence_windows.v1", **segmentation})


def _words(n, seed=0):
    vocab = "the bank river money went sat on of to withdraw a by and walked water".split()
    rng = np.random.default_rng(seed)
    return [vocab[i] for i in rng.integers(0, len(vocab), n)]


def test_sentences_are_embedded_separately(fixture_paths, fixture_bilm):
    nlp = _nlp(fixture_paths)
    words = "She went to the bank . They sat by the river .".split()
    doc = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 5 + [True] + [False] * 5)
    doc = nlp(doc)
    first, second = fixture_bilm.embed([words[:6], words[6:]])
    np.testing.assert_allclose(doc._.elmo["layers"][:, :6], first, atol=1e-6)
    np.testing.assert_allclose(doc._.elmo["layers"][:, 6:], second, atol=1e-6)
    whole = _nlp(fixture_paths, split_sentences=False)(
        Doc(nlp.vocab, words=words, sent_starts=doc.to_array(["SENT_START"]).tolist())
    )
    assert np.abs(whole._.elmo["layers"][2, 6:] - second[2]).max() > 1e-4


def test_long_doc_without_sentences_is_windowed(fixture_paths, fixture_bilm):
    nlp = _nlp(fixture_paths, max_length=64, overlap=8)
    words = _words(3000)
    doc = nlp(Doc(nlp.vocab, words=words))
    layers = doc._.elmo["layers"]
    assert layers.shape == (3, 3000, 32)
    segments = segment(3000, None, 64, 8)
    embedded = fixture_bilm.embed([words[s.start : s.end] for s in segments])
    for seg, out in zip(segments, embedded):
        np.testing.assert_allclose(
            layers[:, seg.keep_start : seg.keep_end],
            out[:, seg.keep_start - seg.start : seg.keep_end - seg.start],
            atol=1e-6,
        )
    assert np.abs(layers).sum(axis=(0, 2)).min() > 0


def test_windowing_changes_little_with_enough_overlap(fixture_paths):
    words = _words(600, seed=1)
    whole = _nlp(fixture_paths, max_length=1000)(Doc(spacy.blank("en").vocab, words=words))
    windowed = _nlp(fixture_paths, max_length=200, overlap=40)(Doc(spacy.blank("en").vocab, words=words))
    a, b = whole._.elmo["layers"][2], windowed._.elmo["layers"][2]
    cosine = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    assert cosine.min() > 0.99


def test_bad_window_settings_fail_when_the_config_is_built(fixture_paths):
    with pytest.raises(ValueError, match="overlap"):
        _nlp(fixture_paths, max_length=64, overlap=40)


@registry.misc("test.chunks_of.v1")
def chunks_of(size: int):
    """A custom segmenter: fixed chunks of `size` kept tokens, no context shared between them."""

    def cut(doc, kept):
        return [Segment(i, min(i + size, len(kept)), i, min(i + size, len(kept))) for i in range(0, len(kept), size)]

    return cut


@registry.misc("test.skips_last_token.v1")
def skips_last_token():
    def cut(doc, kept):
        return [Segment(0, len(kept) - 1, 0, len(kept) - 1)]

    return cut


def test_a_registered_segmenter_decides_the_pieces(fixture_paths, fixture_bilm, tmp_path):
    nlp = _pipeline(fixture_paths, segmentation={"@misc": "test.chunks_of.v1", "size": 3})
    words = "She went to the bank and they sat by".split()
    layers = nlp(Doc(nlp.vocab, words=words))._.elmo["layers"]
    for start, piece in zip(range(0, 9, 3), fixture_bilm.embed([words[0:3], words[3:6], words[6:9]])):
        np.testing.assert_allclose(layers[:, start : start + 3], piece, atol=1e-6)
    nlp.to_disk(tmp_path / "pipeline")
    reloaded = spacy.load(tmp_path / "pipeline")  # its config rebuilds the segmenter
    np.testing.assert_array_equal(reloaded(Doc(reloaded.vocab, words=words))._.elmo["layers"], layers)


def test_a_segmenter_that_loses_a_token_is_named(fixture_paths):
    nlp = _pipeline(fixture_paths, segmentation={"@misc": "test.skips_last_token.v1"})
    with pytest.raises(ElmoError, match="segmenter .* kept tokens up to 3 of 4"):
        nlp(Doc(nlp.vocab, words="a b c d".split()))
