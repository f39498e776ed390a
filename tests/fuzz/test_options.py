"""options.json, fuzzed: mutated bytes, swapped values, random bytes give ElmoOptions that describe a
valid model or the options error naming the file, never a raw JSON, pydantic or recursion error."""

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from spacy_elmo.elmo.nn.options import ElmoOptions, OptionsError, with_changes
from tests.support.fuzz import ODD_VALUES, RUNS, fuzz_settings, json_swapped, mutated
from tests.support.paths import ALLENNLP_DIR

VALID = (ALLENNLP_DIR / "options.json").read_bytes()
DEEP = b"[" * 100_000 + b"]" * 100_000


def _read(path, raw: bytes) -> None:
    path.write_bytes(raw)
    try:
        options = ElmoOptions.from_file(path)
    except OptionsError as err:
        assert str(path) in str(err)
        return
    assert ElmoOptions.from_dict(options.to_dict()) == options  # a valid model's options round-trip


@pytest.mark.parametrize("slow", RUNS)
def test_mutated_options_files_read_or_fail_naming_the_file(slow, tmp_path):
    @fuzz_settings(slow)
    @given(raw=mutated(VALID))
    @example(raw=DEEP)
    @example(raw=b'{"lstm": ' + b"9" * 5000 + b"}")  # more digits than Python turns into an int
    def check(raw):
        _read(tmp_path / "options.json", raw)

    check()


@pytest.mark.parametrize("slow", RUNS)
def test_options_with_a_value_swapped_read_or_fail_naming_the_file(slow, tmp_path):
    @fuzz_settings(slow)
    @given(data=json_swapped(json.loads(VALID)))
    def check(data):
        _read(tmp_path / "options.json", json.dumps(data).encode())

    check()


@pytest.mark.parametrize("slow", RUNS)
def test_with_changes_takes_any_value_or_fails_naming_the_key(slow):
    options = ElmoOptions.from_file(ALLENNLP_DIR / "options.json")
    keys = ["lstm.dim", "lstm.cell_clip", "char_cnn.filters", "char_cnn.n_highway", "char_cnn.embedding", "nope"]

    @fuzz_settings(slow)
    @given(key=st.sampled_from(keys), value=ODD_VALUES)
    def check(key, value):
        try:
            changed = with_changes(options, {key: value})
        except OptionsError:
            return
        assert isinstance(changed, ElmoOptions)

    check()
