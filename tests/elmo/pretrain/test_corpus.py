"""The training text as a stream (elmo/pretrain/corpus.py): shuffled per direction, the same each run,
another order each epoch, split between ranks without overlap; a pattern matching nothing named."""

import pytest

from spacy_elmo.elmo.pretrain import CorpusError
from spacy_elmo.elmo.pretrain.corpus import expand_paths, sentence_stream


def test_streams_are_shuffled_per_direction_and_split_between_ranks(tmp_path):
    files = []
    for k in range(3):
        files.append(tmp_path / f"{k}.txt")
        files[-1].write_text("".join(f"s{k}_{i} x\n" for i in range(20)), encoding="utf8")

    def firsts(stream):
        return [s[0] for s in stream]

    forward = firsts(sentence_stream(files, 1, 0, "forward", buffer_size=7))
    assert sorted(forward) == sorted(f"s{k}_{i}" for k in range(3) for i in range(20))
    assert forward == firsts(sentence_stream(files, 1, 0, "forward", buffer_size=7))
    assert forward != firsts(sentence_stream(files, 1, 0, "backward", buffer_size=7))
    two_epochs = firsts(sentence_stream(files, 2, 0, "forward", buffer_size=7))
    assert two_epochs[:60] == forward and two_epochs[60:] != forward
    ranks = [firsts(sentence_stream(files, 1, 0, "forward", 7, rank=r, world_size=2)) for r in range(2)]
    assert not set(ranks[0]) & set(ranks[1]) and sorted(ranks[0] + ranks[1]) == sorted(forward)


def test_paths_errors_name_the_pattern(tmp_path):
    with pytest.raises(CorpusError, match="nothing-here"):
        expand_paths([str(tmp_path / "nothing-here*.txt")])
