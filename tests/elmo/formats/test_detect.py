"""Format detection (spacy_elmo/elmo/formats/detect.py): two models are refused as ambiguous alike whether
they sit in one folder (of two formats) or in two, and the error names their files."""

import shutil
import zipfile

import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.formats import InputFileError, model_layout
from tests.support.paths import MANYLANGS_DIR, TINY_MODEL

MANYLANGS = MANYLANGS_DIR / "words-2layers-relu"


@pytest.fixture
def two_formats(tmp_path):
    """An ELMoForManyLangs model and a bilm-tf model side by side in one folder."""
    folder = tmp_path / "both"
    shutil.copytree(MANYLANGS, folder)
    for name in ("options.json", "weights.hdf5"):
        shutil.copy(TINY_MODEL / name, folder / name)
    return folder


def test_two_formats_in_one_folder_are_refused_naming_the_files(two_formats):
    with pytest.raises(InputFileError, match="several models") as err:
        load_bilm(two_formats)
    for name in ("elmoformanylangs", "encoder.pkl", "bilm-tf", "options.json", "weights.hdf5"):
        assert name in str(err.value)


def test_two_formats_in_one_archive_are_refused(two_formats, tmp_path):
    archive = tmp_path / "both.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(two_formats.iterdir()):
            zf.write(path, f"both/{path.name}")
    with pytest.raises(InputFileError, match="several models .*both/weights.hdf5"):
        model_layout(archive)


def test_two_models_in_two_subfolders_are_refused_naming_the_files(tmp_path):
    shutil.copytree(MANYLANGS, tmp_path / "fr")
    shutil.copytree(TINY_MODEL, tmp_path / "en")
    with pytest.raises(InputFileError, match="several models") as err:
        model_layout(tmp_path)
    assert "fr/encoder.pkl" in str(err.value) and "en/weights.hdf5" in str(err.value)


NLPL_FILES = {"options.json": "m/options.json", "model.hdf5": "m/model.hdf5", "meta.json": "m/meta.json"}


def _format_files(name):
    from spacy_elmo.elmo.formats.detect import FORMATS

    return next(entry for entry in FORMATS if entry.name == name)


def test_an_nlpl_folder_is_told_apart_by_meta_json_and_read_as_bilm_tf():
    """The NLPL repository's format: bilm-tf's files plus `meta.json`, read by bilm-tf's reader."""
    from spacy_elmo.elmo.formats.detect import FORMATS

    nlpl, bilm_tf = _format_files("nlpl"), _format_files("bilm-tf")
    assert nlpl.detect(NLPL_FILES) == {"options": "m/options.json", "weights": "m/model.hdf5"}
    assert nlpl.detect(NLPL_FILES) == bilm_tf.detect(NLPL_FILES)
    assert nlpl.reader == bilm_tf.reader
    without_meta = {name: path for name, path in NLPL_FILES.items() if name != "meta.json"}
    assert nlpl.detect(without_meta) is None and bilm_tf.detect(without_meta) is not None
    assert FORMATS.index(nlpl) < FORMATS.index(bilm_tf)


def test_a_saved_spacy_pipeline_is_named_with_the_command_that_takes_its_biLM_out(tmp_path):
    from spacy_elmo.elmo.formats import is_spacy_pipeline

    for name in ("config.cfg", "meta.json", "elmo/model", "elmo/cfg"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("{}", encoding="utf8")
    assert is_spacy_pipeline(tmp_path) and not is_spacy_pipeline(tmp_path / "elmo")
    with pytest.raises(InputFileError, match="saved spaCy pipeline.*python -m spacy_elmo export DIR --model"):
        load_bilm(tmp_path)
