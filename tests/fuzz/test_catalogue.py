"""Catalogue files (a mirror's own list), fuzzed: the packaged catalogue with a value swapped or a key
removed, or its bytes mutated, gives a valid catalogue or the catalogue error naming the file."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.sources.hub.catalogue import CATALOGUE_PATH, Catalogue, load_catalogue
from tests.support.fuzz import RUNS, fuzz_settings, json_swapped, mutated


def _features(entry) -> set:
    files = entry["files"]
    return {key for key in ("joined_archive", "layers") if entry.get(key)} | {
        key for file in files for key in ("by_hand", "mirrors", "archive", "sha1") if file.get(key)
    }


def _sample() -> dict:
    """The packaged catalogue cut to one model for each feature an entry may have (mirrors, archives,
    joined archives, files fetched by hand, ...): small enough for hypothesis to show a failing one."""
    catalogue = json.loads(CATALOGUE_PATH.read_text(encoding="utf8"))
    kept, seen = [], set()
    for entry in catalogue["models"]:
        if not _features(entry) <= seen or entry["format"] not in {e["format"] for e in kept}:
            kept.append(entry)
            seen |= _features(entry)
    return {**catalogue, "models": kept}


SAMPLE = _sample()
VALID = json.dumps(SAMPLE, indent=1).encode()


@pytest.mark.parametrize("slow", RUNS)
def test_a_damaged_catalogue_loads_or_fails_naming_it(slow, tmp_path):
    path = tmp_path / "catalogue.json"

    @fuzz_settings(slow)
    @given(raw=st.one_of(mutated(VALID), json_swapped(SAMPLE).map(lambda d: json.dumps(d).encode())))
    def check(raw):
        path.write_bytes(raw)
        try:
            catalogue = load_catalogue(path)
        except InputFileError as err:
            assert str(path) in str(err), err
            return
        assert isinstance(catalogue, Catalogue)
        for name in catalogue.names():
            assert catalogue.get(name).size_label

    check()
