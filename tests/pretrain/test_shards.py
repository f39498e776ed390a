"""Packed token-id shards (spacy_elmo/pretrain/shards.py): what is read back is the text that was packed,
pretraining and perplexity take a packed folder as they take text, and damage is a CorpusError."""

import lzma
import shutil

import pytest
import torch

from spacy_elmo.nn.options import preset
from spacy_elmo.pretrain import CorpusError, LanguageModel, Vocabulary, perplexity
from spacy_elmo.pretrain.corpus import corpus_lines, corpus_stats, expand_paths, sentence_stream
from spacy_elmo.pretrain.shards import LEXICON_FILE, pack_corpus

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
