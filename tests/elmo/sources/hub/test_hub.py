"""The hub's face (elmo/sources/hub/__init__.py): a catalogue name told from a path, and a downloaded model found in the
cache, or the exact download command when it is not there (nothing is fetched)."""

import pytest

from spacy_elmo.elmo.sources.hub import (
    ModelNotDownloadedError,
    ModelReferenceError,
    downloaded_model_dir,
    is_catalogue_name,
    load_catalogue,
)
from spacy_elmo.elmo.sources.hub.cache_layout import CACHE_ENV, RECORD_NAME

NAME = load_catalogue().names()[0]


def test_catalogue_names_are_told_from_paths():
    assert is_catalogue_name(NAME)
    assert not is_catalogue_name(f"./{NAME}") and not is_catalogue_name("models/elmo")


def test_a_downloaded_model_is_its_folder_in_the_cache(tmp_path):
    (tmp_path / NAME).mkdir()
    (tmp_path / NAME / RECORD_NAME).write_text("{}")
    assert downloaded_model_dir(NAME, tmp_path) == tmp_path / NAME


def test_a_model_not_downloaded_gives_the_command_with_the_cache_named(tmp_path):
    (tmp_path / NAME).mkdir()  # a folder without its record is not a download
    with pytest.raises(ModelNotDownloadedError, match=f"python -m spacy_elmo download {NAME} --cache-dir {tmp_path}"):
        downloaded_model_dir(NAME, tmp_path)


def test_the_default_cache_is_not_named_in_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    with pytest.raises(ModelNotDownloadedError, match=f"download {NAME}$"):
        downloaded_model_dir(NAME)


def test_a_name_outside_the_catalogue_is_unknown(tmp_path):
    with pytest.raises(ModelReferenceError):
        downloaded_model_dir("no-such-model", tmp_path)
