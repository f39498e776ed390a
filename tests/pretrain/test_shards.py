"""Decompression bombs in a packed corpus: a shard or a lexicon that expands past its bound is refused by
name before the bound's worth is made, and `pack_corpus` writes nothing it could not read back."""

import lzma
import tracemalloc

import pytest

from spacy_elmo.pretrain import CorpusError, shards
from spacy_elmo.pretrain.shards import LEXICON_FILE, pack_corpus, shard_lines

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
