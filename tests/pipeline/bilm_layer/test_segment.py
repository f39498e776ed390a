import pytest

from spacy_elmo.pipeline.bilm_layer.segment import Segment, segment, windows


def _covered_once(segments, n):
    kept = [i for s in segments for i in range(s.keep_start, s.keep_end)]
    return kept == list(range(n))


def test_short_input_is_one_segment():
    assert windows(0, 10, 128, 16) == [Segment(0, 10, 0, 10)]


@pytest.mark.parametrize("n, max_length, overlap", [(1000, 128, 16), (129, 128, 16), (20000, 200, 50), (50, 7, 3)])
def test_windows_cover_every_token_once_with_context(n, max_length, overlap):
    segs = windows(0, n, max_length, overlap)
    assert _covered_once(segs, n)
    for s in segs:
        assert s.end - s.start <= max_length
        assert s.start <= s.keep_start < s.keep_end <= s.end
        assert s.keep_start - s.start >= overlap or s.start == 0
        assert s.end - s.keep_end >= overlap or s.end == n


def test_sentences_are_segments_and_long_ones_are_windowed():
    segs = segment(300, [0, 5, 20], max_length=100, overlap=10)
    assert segs[0] == Segment(0, 5, 0, 5) and segs[1] == Segment(5, 20, 5, 20)
    assert all(s.start >= 20 for s in segs[2:]) and len(segs) > 3
    assert _covered_once(segs, 300)


def test_no_sentences_means_windows_over_the_document():
    assert _covered_once(segment(1000, None, 128, 16), 1000)
    assert segment(0, None, 128, 16) == []


@pytest.mark.parametrize("starts", [[1, 5], [0, 5, 5], [0, 10]])
def test_bad_sentence_starts(starts):
    with pytest.raises(ValueError, match="sentence starts"):
        segment(10, starts, 128, 16)


def test_bad_window_settings():
    with pytest.raises(ValueError, match="overlap"):
        windows(0, 500, 100, 50)
    with pytest.raises(ValueError, match="max_length"):
        windows(0, 500, 0, 0)
