"""What the biLM reads of a batch (pipeline/bilm_layer/read_tokens.py): every token but whitespace, the segmenter's
pieces in the index space of those tokens (sub-batches: tests/elmo/nn/test_batch_plan.py)."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.pipeline.bilm_layer.read_tokens import doc_segments, kept_tokens, read_mask
from spacy_elmo.pipeline.bilm_layer.segment import Segment, build_sentence_windows_v1


@pytest.fixture(scope="module")
def doc():
    nlp = spacy.blank("en")
    return Doc(
        nlp.vocab, words=["A", "\n\n", "bank", " ", "rose", "."], spaces=[True, False, True, False, False, False]
    )


def test_whitespace_tokens_are_not_read(doc):
    assert read_mask(doc).tolist() == [True, False, True, False, True, True]
    assert kept_tokens(doc).tolist() == [0, 2, 4, 5]
    assert kept_tokens(doc).dtype == np.int64


def test_segments_count_kept_tokens_only(doc):
    keep = kept_tokens(doc)
    segments = doc_segments(build_sentence_windows_v1(split_sentences=False, max_length=3, overlap=0), doc, keep)
    assert segments[0].start == 0 and segments[-1].end == len(keep) == 4


def test_a_doc_of_whitespace_has_no_segments():
    doc = Doc(spacy.blank("en").vocab, words=[" ", "\n"], spaces=[False, False])
    assert doc_segments(build_sentence_windows_v1(), doc, kept_tokens(doc)) == []


def test_a_segmenter_that_loses_tokens_is_named(doc):
    def drops_the_last(doc, kept):
        return [Segment(0, len(kept) - 1, 0, len(kept) - 1)]

    with pytest.raises(ElmoError, match="drops_the_last"):
        doc_segments(drops_the_last, doc, kept_tokens(doc))
