"""Text a user hands over, fuzzed: vocabularies, pretraining and held-out corpora, `dump`'s and
`tokenize`'s input (the shared text reader) and packed token-id shards, mutated or random. Each reads
into what its reader promises or fails with the package's error naming the file."""

import itertools
import shutil

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from spacy_elmo.elmo.embed.hdf5 import check_has_tokens
from spacy_elmo.elmo.errors import InputError, InputFileError
from spacy_elmo.elmo.pretrain.corpus import corpus_stats, read_sentences
from spacy_elmo.elmo.pretrain.shards import LEXICON_FILE, pack_corpus, shard_lines
from spacy_elmo.elmo.pretrain.vocab import SPECIALS, Vocabulary, build_vocabulary, count_tokens
from spacy_elmo.elmo.util.io import text_lines
from tests.support.fuzz import RUNS, fuzz_file, fuzz_settings, mutated
from tests.support.paths import TRAIN_TEXT, TRAIN_VOCAB

# Characters that split lines or words in some readers and not in others, and undecodable bytes.
ODD_TEXT = st.text(st.sampled_from(list("ab \t\n\r\x0b\x0c\x1c\x85\u2028\u00a0\ufeff\x00é")), max_size=60)


def _names(path, read):
    """`read()`'s result, or None after an InputFileError naming `path`."""
    try:
        return read()
    except InputFileError as err:
        assert str(path) in str(err), err
        return None


@pytest.mark.parametrize("slow", RUNS)
def test_a_mutated_vocabulary_reads_or_fails_naming_it(slow, tmp_path):
    def read(path):
        vocab = _names(path, lambda: Vocabulary.from_file(path))
        if vocab is not None:
            assert tuple(vocab.words[:3]) == SPECIALS and len(set(vocab.words)) == len(vocab)

    fuzz_file(slow, tmp_path / "vocab.txt", TRAIN_VOCAB.read_bytes(), read)


@pytest.mark.parametrize("slow", RUNS)
def test_mutated_text_reads_as_tokens_or_fails_naming_it(slow, tmp_path):
    path = tmp_path / "text.txt"

    @fuzz_settings(slow)
    @given(raw=st.one_of(mutated(TRAIN_TEXT.read_bytes()), ODD_TEXT.map(lambda t: t.encode("utf8", "surrogatepass"))))
    def check(raw):
        path.write_bytes(raw)
        sentences = _names(path, lambda: list(read_sentences(path)))
        if sentences is not None:
            assert all(sentence and all(token and not token.isspace() for token in sentence) for sentence in sentences)
        _names(path, lambda: list(text_lines(path, "input")))
        _names(path, lambda: count_tokens([path]))
        for read in (lambda: corpus_stats([path]), lambda: check_has_tokens(path)):
            try:
                _names(path, read)
            except InputError as err:  # no tokens: said about the file
                assert str(path) in str(err)

    check()


@pytest.mark.parametrize("slow", RUNS)
def test_any_text_gives_a_vocabulary_that_round_trips(slow, tmp_path):
    corpus, saved = tmp_path / "text.txt", tmp_path / "vocab.txt"

    @fuzz_settings(slow)
    @given(text=ODD_TEXT)
    @example(text="\ufeff")
    def check(text):
        corpus.write_text(text, encoding="utf8")
        try:
            vocab = build_vocabulary(count_tokens([corpus]))
        except InputFileError:
            assert not text.removeprefix("\ufeff").split()  # a byte-order mark first is no text
            return
        vocab.to_file(saved)
        assert Vocabulary.from_file(saved).words == vocab.words

    check()


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("packed")
    pack_corpus([TRAIN_TEXT], folder, "train", shard_tokens=50)
    return folder


@pytest.mark.parametrize("slow", RUNS)
def test_a_mutated_shard_or_lexicon_reads_as_its_text_or_fails_naming_it(slow, packed, tmp_path):
    shard = sorted(packed.glob("*.ids.xz"))[0]
    expected = list(shard_lines(shard))
    trials = itertools.count()

    @fuzz_settings(slow)
    @given(target=st.sampled_from([shard.name, LEXICON_FILE]), data=st.data())
    def check(target, data):
        folder = shutil.copytree(packed, tmp_path / str(next(trials)))  # a new lexicon path: no cached one
        (folder / target).write_bytes(data.draw(mutated((packed / target).read_bytes())))
        try:
            lines = list(shard_lines(folder / shard.name))
        except InputFileError as err:
            assert str(folder) in str(err), err
            return
        assert lines == expected or target == LEXICON_FILE  # xz checks the shard; a lexicon may rename words

    check()
