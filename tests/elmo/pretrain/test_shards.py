"""Packed token-id shards (spacy_elmo/elmo/pretrain/shards.py): what is read back is the text that was packed,
pretraining and perplexity take a packed folder as they take text, and damage is a CorpusError."""

import lzma
import shutil
import tracemalloc

import pytest
import torch

from spacy_elmo.elmo.nn.options import preset
from spacy_elmo.elmo.pretrain import CorpusError, LanguageModel, Vocabulary, perplexity, shards
from spacy_elmo.elmo.pretrain.corpus import corpus_lines, corpus_stats, expand_paths, sentence_stream
from spacy_elmo.elmo.pretrain.shards import LEXICON_FILE, pack_corpus, shard_lines

TEXT_A = "The bank  of the river .\n\n  money in the bank\nrates were raised\n"
TEXT_B = "Ünïcode wörds stay whole\nthe river bank\n"


@pytest.fixture
def texts(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(TEXT_A, encoding="utf8")
    b.write_text(TEXT_B, encoding="utf8")
    return [a, b]


def lines_of(paths):
    return [line for path in paths for line in corpus_lines(path, "text")]


def test_shards_give_back_the_packed_lines_in_order(texts, tmp_path):
    shards = pack_corpus(texts, tmp_path / "packed", "x", shard_tokens=7)
    expected = [" ".join(line.split()) for line in (TEXT_A + TEXT_B).splitlines() if line.split()]
    paths = expand_paths([tmp_path / "packed"])
    assert [p.name for p in paths] == [s.name for s in shards]  # the lexicon is no training file
    assert lines_of(paths) == expected
    # Shards close after the sentence that reaches shard_tokens, so none is split.
    assert [s.n_tokens for s in shards] == [10, 7, 3]
    assert corpus_stats(paths) == corpus_stats(texts)


def test_pretraining_streams_and_perplexity_read_shards_as_text(texts, tmp_path):
    pack_corpus(texts, tmp_path / "packed", "x", shard_tokens=10**6)
    (shard,) = expand_paths([tmp_path / "packed"])
    merged = tmp_path / "merged.txt"  # the same text as packed: blank lines are not kept
    merged.write_text("".join(line + "\n" for line in (TEXT_A + TEXT_B).splitlines() if line.strip()), encoding="utf8")
    assert list(sentence_stream([shard], 2, 0, "forward")) == list(sentence_stream([merged], 2, 0, "forward"))
    vocab = Vocabulary(["<S>", "</S>", "<UNK>", "the", "bank", "river"])
    torch.manual_seed(0)
    model = LanguageModel(preset("tiny"), len(vocab)).eval()
    from_shard, from_text = perplexity(model, vocab, shard), perplexity(model, vocab, merged)
    assert from_shard.to_dict() == from_text.to_dict()


def test_damaged_or_mismatched_shards_are_corpus_errors(texts, tmp_path):
    pack_corpus(texts[:1], tmp_path / "one", "x")
    pack_corpus(texts[1:], tmp_path / "two", "x")
    shard = tmp_path / "one" / "x.000.ids.xz"
    shutil.copy(tmp_path / "two" / "x.000.ids.xz", tmp_path / "one" / "y.000.ids.xz")
    with pytest.raises(CorpusError, match="y.000.ids.xz was packed with another lexicon"):
        lines_of([tmp_path / "one" / "y.000.ids.xz"])
    shard.write_bytes(shard.read_bytes()[:-9])
    with pytest.raises(CorpusError, match="x.000.ids.xz is damaged"):
        lines_of([shard])
    shard.write_bytes(lzma.compress(b"NOTIDS00" + bytes(11)))
    with pytest.raises(CorpusError, match="is not a token-id shard"):
        lines_of([shard])
    (tmp_path / "two" / LEXICON_FILE).unlink()
    with pytest.raises(CorpusError, match=f"has no {LEXICON_FILE} beside it"):
        lines_of([tmp_path / "two" / "x.000.ids.xz"])


BOUND = 2**20


@pytest.fixture
def packed(tmp_path, monkeypatch):
    text = tmp_path / "a.txt"
    text.write_text("the bank of the river\nmoney in the bank\n", encoding="utf8")
    pack_corpus([text], tmp_path / "packed", "x")
    shards._lexicon.cache_clear()
    monkeypatch.setattr(shards, "MAX_SHARD_BYTES", BOUND)
    monkeypatch.setattr(shards, "MAX_LEXICON_BYTES", BOUND)
    yield tmp_path / "packed"
    shards._lexicon.cache_clear()


def _bomb(header: bytes = b"") -> bytes:
    """A few KB of xz that expand to 64 times the bound."""
    return lzma.compress(header + bytes(64 * BOUND), preset=6)


def _peak_bytes(read):
    """The most memory Python and liblzma held while `read()` ran (the xz decoder's dictionary included)."""
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_shard_bomb_is_refused_by_name_without_expanding_it(packed):
    shard = packed / "x.000.ids.xz"
    genuine = _peak_bytes(lambda: list(shard_lines(shard)))
    header = lzma.decompress(shard.read_bytes())[: len(shards.MAGIC) + shards.DIGEST_BYTES]
    shard.write_bytes(_bomb(header))
    assert shard.stat().st_size < 64 * 2**10

    def read():
        with pytest.raises(CorpusError, match=rf"shard {shard} expands to more than {BOUND} bytes.*MAX_SHARD_BYTES"):
            list(shard_lines(shard))

    assert _peak_bytes(read) < genuine + 2 * BOUND + 16 * 2**20, "more than the bound (and a decoder) was made"


def test_a_lexicon_bomb_is_refused_by_name(packed):
    lexicon = packed / LEXICON_FILE
    lexicon.write_bytes(_bomb())
    with pytest.raises(CorpusError, match=rf"lexicon {lexicon} expands to more than {BOUND} bytes.*MAX_LEXICON_BYTES"):
        list(shard_lines(packed / "x.000.ids.xz"))


def test_a_compressed_file_over_the_bound_is_refused_before_it_is_read(packed):
    shard = packed / "x.000.ids.xz"
    shard.write_bytes(bytes(2 * BOUND))
    with pytest.raises(CorpusError, match="expands to more than"):
        list(shard_lines(shard))


def test_a_shard_cut_short_or_with_trailing_data_is_damaged(packed):
    shard = packed / "x.000.ids.xz"
    data = shard.read_bytes()
    shard.write_bytes(data[:-8])
    with pytest.raises(CorpusError, match="is damaged"):
        list(shard_lines(shard))
    shard.write_bytes(data + b"extra")
    with pytest.raises(CorpusError, match="is damaged"):
        list(shard_lines(shard))


def test_a_shard_at_the_bound_is_read(tmp_path, monkeypatch):
    text = tmp_path / "a.txt"
    text.write_text("a b c\n", encoding="utf8")
    pack_corpus([text], tmp_path / "packed", "x")
    size = len(lzma.decompress((tmp_path / "packed" / "x.000.ids.xz").read_bytes()))
    monkeypatch.setattr(shards, "MAX_SHARD_BYTES", size)
    assert list(shard_lines(tmp_path / "packed" / "x.000.ids.xz")) == ["a b c"]


def test_pack_corpus_refuses_a_shard_or_lexicon_it_could_not_read_back(tmp_path, monkeypatch):
    text = tmp_path / "a.txt"
    text.write_text(" ".join(f"w{i}" for i in range(2000)) + "\n", encoding="utf8")
    monkeypatch.setattr(shards, "MAX_SHARD_BYTES", 4096)
    with pytest.raises(CorpusError, match="smaller shard_tokens"):
        pack_corpus([text], tmp_path / "packed", "x")
    monkeypatch.setattr(shards, "MAX_SHARD_BYTES", 2**20)
    monkeypatch.setattr(shards, "MAX_LEXICON_BYTES", 4096)
    with pytest.raises(CorpusError, match="pack the files in several corpora"):
        pack_corpus([text], tmp_path / "packed2", "x")
