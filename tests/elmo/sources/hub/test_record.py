"""The download record (elmo/sources/hub/record.py): written last, it marks a model directory complete and holds the
sha256 of every download and installed file, so `models` can tell a model altered since."""

import json

import pytest

from spacy_elmo.elmo.sources.hub import load_catalogue
from spacy_elmo.elmo.sources.hub.cache_layout import RECORD_NAME
from spacy_elmo.elmo.sources.hub.record import (
    alterations,
    installed_files,
    is_complete,
    read_installed,
    recorded_sha256s,
    write_record,
)
from spacy_elmo.elmo.util.io import file_sha256

FETCHED = [{"url": "https://example.org/model.zip", "size": 3, "sha256": "f" * 64}]


@pytest.fixture
def model(tmp_path):
    """A model directory of two files, recorded."""
    directory = tmp_path / "model"
    (directory / "sub").mkdir(parents=True)
    (directory / "options.json").write_text("{}")
    (directory / "sub" / "weights.hdf5").write_bytes(b"weights")
    write_record(directory, load_catalogue().models[0], FETCHED)
    return directory


def test_the_record_names_the_model_its_downloads_and_every_installed_file(model):
    record = json.loads((model / RECORD_NAME).read_text())
    entry = load_catalogue().models[0]
    assert (record["name"], record["format"], record["source"]) == (entry.name, entry.format, entry.source)
    assert record["files"] == FETCHED
    assert record["installed"] == {
        "options.json": file_sha256(model / "options.json", "model file"),
        "sub/weights.hdf5": file_sha256(model / "sub" / "weights.hdf5", "model file"),
    }
    assert read_installed(model) == record["installed"]


def test_a_directory_is_complete_once_its_record_is_written(model, tmp_path):
    assert is_complete(model)
    assert not is_complete(tmp_path)


def test_installed_files_leave_the_record_out(model):
    assert sorted(installed_files(model)) == ["options.json", "sub/weights.hdf5"]


def test_recorded_sha256s_hold_downloads_and_installed_files(model):
    assert recorded_sha256s(model) == {"f" * 64, *read_installed(model).values()}


def test_an_unaltered_model_has_no_alterations(model):
    assert alterations(model) == []


def test_changed_missing_and_added_files_are_each_one_line(model):
    (model / "options.json").write_text('{"changed": 1}')
    (model / "sub" / "weights.hdf5").unlink()
    (model / "extra.txt").write_text("x")
    lines = alterations(model)
    assert lines[:2] == ["sub/weights.hdf5: missing", "extra.txt: added"]
    assert len(lines) == 3 and lines[2].startswith("options.json: changed (sha256 ")


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"installed": "none"}'])
def test_an_unreadable_record_records_nothing_and_is_reported(model, content):
    (model / RECORD_NAME).write_text(content)
    assert read_installed(model) == {} and recorded_sha256s(model) == set()
    assert alterations(model) == [f"{model / RECORD_NAME} is unreadable or records no sha256 of the installed files"]
