"""The training vocabulary: format, order, limits, and clear errors on bad files."""

from collections import Counter

import pytest

from spacy_elmo.elmo.pretrain.vocab import SPECIALS, CorpusError, Vocabulary, build_vocabulary, count_tokens
from tests.support.paths import BILM_TF_DIR

TRAIN_DIR = BILM_TF_DIR / "train"


def test_specials_first_then_by_frequency_ties_alphabetical():
    vocab = build_vocabulary(Counter({"b": 2, "a": 2, "c": 5, "d": 1}))
    assert vocab.words == [*SPECIALS, "c", "a", "b", "d"]


def test_min_count_and_max_size():
    counts = Counter({"x": 3, "y": 2, "z": 1})
    assert build_vocabulary(counts, min_count=2).words[3:] == ["x", "y"]
    assert build_vocabulary(counts, max_size=4).words == [*SPECIALS, "x"]


def test_unknown_words_map_to_unk():
    vocab = build_vocabulary(Counter({"known": 1}))
    assert vocab.ids(["known", "unknown", "</S>"]) == [3, vocab.unk_id, 1]


def test_reads_the_original_format(tmp_path):
    vocab = Vocabulary.from_file(TRAIN_DIR / "vocab.txt")
    assert len(vocab) == 32 and vocab.words[:4] == [*SPECIALS, "of"]
    path = tmp_path / "v.txt"
    path.write_text("<S>\n</S>\n<UNK>\n!!!MAXTERMID\nthe\n", encoding="utf8")
    assert Vocabulary.from_file(path).words == [*SPECIALS, "the"]


def test_file_without_specials_is_rejected(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("the\nof\n", encoding="utf8")
    with pytest.raises(CorpusError, match="must start with the lines <S>, </S>, <UNK>"):
        Vocabulary.from_file(path)


def test_a_byte_order_mark_is_no_part_of_a_word(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\ufeffhello world\nhello\n", encoding="utf8")
    vocab = build_vocabulary(count_tokens([corpus]))
    assert vocab.words[3:] == ["hello", "world"]
    saved = tmp_path / "vocab.txt"
    saved.write_text("\ufeff" + "".join(f"{w}\n" for w in vocab.words), encoding="utf8")  # as an editor saves it
    assert Vocabulary.from_file(saved).words == vocab.words
