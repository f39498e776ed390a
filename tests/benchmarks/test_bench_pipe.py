"""bench_pipe: its sizes (a preset or an options.json, changed key by key by `--set`), embed on the batches
nlp.pipe reads, both sides timed in turn."""

import pytest

from benchmarks.bench_pipe import EXACT, measure, ratio_row, same_batches, size_options, write_model
from benchmarks.common import DEFAULT_TEXT
from spacy_elmo import preset
from spacy_elmo.elmo.errors import OptionsError
from tests.support.paths import REPO

DEFAULT_OPTIONS = REPO / "spacy_elmo" / "elmo" / "sources" / "models" / "gutenberg-web-2x512" / "options.json"


def test_a_preset_or_an_options_file_changed_by_set():
    assert size_options("small", []) == preset("small")
    changed = size_options(str(DEFAULT_OPTIONS), ["lstm.dim=1024", "char_cnn.filters=[[1, 32], [2, 64]]"])
    assert changed.lstm.dim == 1024 and changed.lstm.projection_dim == 128
    assert [list(f) for f in changed.char_cnn.filters] == [[1, 32], [2, 64]]


def test_an_unknown_key_is_named():
    with pytest.raises(OptionsError, match="no key 'lstm.width'"):
        size_options("tiny", ["lstm.width=8"])


def test_embed_gets_the_batches_nlp_pipe_reads():
    sentences = [["a"], ["b", "c"], ["d"], ["e"], ["f"]]
    assert same_batches(sentences, 2) == [[["a"], ["b", "c"]], [["d"], ["e"]], [["f"]]]


def test_each_side_is_timed_in_every_round_and_the_row_gives_their_ratio(tmp_path):
    write_model(preset("tiny"), tmp_path)
    result = measure(tmp_path, EXACT, 4, 60, DEFAULT_TEXT, rounds=2)
    assert result["tokens"] >= 60
    for timings in (result["seconds"], result["cpu_seconds"]):
        assert set(timings) == {"embed", "pipe"} and all(len(t) == 2 for t in timings.values())
    result["seconds"] = {"embed": [2.0, 1.0], "pipe": [1.0, 1.25]}
    result["cpu_seconds"] = {"embed": [3.0, 2.0], "pipe": [2.5, 4.0]}
    assert ratio_row(4, EXACT, result).split()[-3:] == ["1.000", "0.800-2.000", "0.800"]
    assert "not run here: no bf16 units" in ratio_row(4, "bf16", {"unavailable": "no bf16 units"})
