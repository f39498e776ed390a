"""`vocab`: a corpus's vocabulary streamed from many files into the original's format; an empty corpus
refused with nothing written."""

from spacy_elmo.elmo.pretrain.vocab import SPECIALS, Vocabulary, count_tokens
from tests.support.cli import assert_clear_error, run_cli


def test_cli_streams_files_and_round_trips(tmp_path):
    (tmp_path / "a.txt").write_text("the cat sat\nthe dog\n", encoding="utf8")
    (tmp_path / "b.txt").write_text("the cat\n", encoding="utf8")
    out = tmp_path / "vocab.txt"
    result = run_cli("vocab", tmp_path / "*.txt", "--output", out)
    assert result.returncode == 0, result.stderr
    assert Vocabulary.from_file(out).words == [*SPECIALS, "the", "cat", "dog", "sat"]
    assert count_tokens([tmp_path / "a.txt"])["the"] == 2


def test_cli_empty_corpus_fails_and_writes_nothing(tmp_path):
    (tmp_path / "empty.txt").write_text("\n\n", encoding="utf8")
    out = tmp_path / "vocab.txt"
    assert_clear_error(run_cli("vocab", tmp_path / "empty.txt", "--output", out), "empty")
    assert not out.exists()
