"""bench_pipe's sizes: a preset or an options.json, changed key by key by `--set`."""

import pytest

from benchmarks.bench_pipe import size_options
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
