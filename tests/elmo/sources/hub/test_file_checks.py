"""Whether a downloaded file is what its name claims (elmo/sources/hub/file_checks.py), before anything is installed:
a portal's HTML page saved as `weights.hdf5` or `options.json` is named, and an assembled model that
would not load says why."""

import shutil
import zipfile

import h5py
import pytest

from spacy_elmo.elmo.sources.hub.file_checks import file_problem, model_problem
from tests.support.paths import TINY_MODEL

HTML = b"<!DOCTYPE html><html><body>Sign in to continue</body></html>"


@pytest.fixture
def model(tmp_path):
    directory = tmp_path / "model"
    shutil.copytree(TINY_MODEL, directory)
    (directory / "README.md").unlink()
    return directory


@pytest.mark.parametrize("name", ["options.json", "weights.hdf5", "model.h5", "encoder.pkl", "model.zip"])
def test_an_html_page_is_not_what_its_name_claims(tmp_path, name):
    path = tmp_path / "download"
    path.write_bytes(HTML)
    problem = file_problem(path, name)
    assert problem.startswith("is not a")
    if not name.endswith(".zip"):
        assert "it begins with b'<!DOCTYPE html>" in problem


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "[" + "9" * 5000 + "]"])
def test_json_that_python_cannot_hold_is_a_problem_not_a_crash(tmp_path, text):
    path = tmp_path / "download"
    path.write_text(text)
    assert file_problem(path, "options.json").startswith("is not a readable JSON file")


def test_files_that_are_what_they_claim_have_no_problem(tmp_path, model):
    pickle = tmp_path / "encoder.pkl"
    pickle.write_bytes(b"\x80\x04\x95" + b"\x00" * 10)
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("options.json", "{}")
    assert file_problem(model / "options.json", "options.json") == ""
    assert file_problem(model / "weights.hdf5", "weights.hdf5") == ""
    assert file_problem(pickle, "encoder.pkl") == ""
    assert file_problem(archive, "model.zip") == ""
    assert file_problem(tmp_path / "encoder.pkl", "vocab.txt") == ""  # no claim to check


def test_a_model_that_loads_has_no_problem(model):
    assert model_problem(model) == ""


def test_a_damaged_file_of_the_model_is_named(model):
    (model / "options.json").write_bytes(HTML)
    assert model_problem(model).startswith("options.json is not a readable JSON file")


def test_a_folder_holding_no_model_says_so(tmp_path):
    (tmp_path / "notes.txt").write_text("no model here")
    assert model_problem(tmp_path) != ""


def test_weights_without_the_datasets_every_weights_file_holds_are_named(model):
    with h5py.File(model / "weights.hdf5", "a") as f:
        del f["char_embed"]
    assert model_problem(model) == "weights file weights.hdf5 lacks char_embed"
