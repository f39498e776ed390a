"""`python -m spacy_elmo pack` (spacy_elmo/cli/pack.py): a corpus into token-id shards that read back as
the text, and a folder that holds a packed corpus already is refused."""

from spacy_elmo.elmo.pretrain.corpus import corpus_lines, expand_paths
from tests.support.cli import assert_clear_error, run_cli
from tests.support.tiny_corpus import write_tiny_corpus


def test_pack_writes_shards_that_read_back_as_the_corpus(tmp_path):
    corpus = write_tiny_corpus(tmp_path / "corpus", 60)
    (text,) = corpus["paths.train"]
    packed = tmp_path / "packed"
    result = run_cli("pack", text, "--output", packed, "--shard-tokens", "100", "--prefix", "web")
    assert result.returncode == 0, result.stderr
    shards = expand_paths([packed])
    assert len(shards) > 1 and all(p.name.startswith("web.") for p in shards)
    packed_lines = [line for p in shards for line in corpus_lines(p, "text")]
    assert packed_lines == [line.rstrip("\n") for line in corpus_lines(text, "text")]
    assert f"into {len(shards)} shards" in result.stdout

    again = run_cli("pack", text, "--output", packed)
    assert_clear_error(again, "holds a packed corpus already", "new or empty folder")


def test_pack_into_a_read_only_folder_is_refused_before_reading_the_corpus(tmp_path, read_only_folder):
    corpus = write_tiny_corpus(tmp_path / "corpus", 60)
    (text,) = corpus["paths.train"]
    locked = read_only_folder(tmp_path / "locked")
    result = run_cli("pack", text, "--output", locked)
    assert_clear_error(result, f"cannot write in output folder {locked}: read-only file system")
    assert "Errno" not in result.stderr
