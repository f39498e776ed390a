"""One loader for every published format: directories and zip archives told apart by their files,
archives read safely, ELMoForManyLangs' weight files refused unless they are plain tensor state dicts,
and the `path` of `spacy-elmo.BiLM.v2`."""

import json
import shutil
import stat
import zipfile

import numpy as np
import pytest
import spacy

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.formats import ArchiveError, model_layout, model_options
from spacy_elmo.elmo.sources import bundled_model_paths
from tests.support.paths import ALLENNLP_DIR, MANYLANGS_DIR
from tests.support.pipelines import EXACT_LAYERS, elmo_config

SENTENCES = [["Paris", "est", "très", "belle", "."], ["Москва", "—", "столица"], ["我们", "🙂"]]
MANYLANGS = MANYLANGS_DIR / "words-2layers-relu"


def _zip(directory, archive, folder="", extra=()):
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(directory.iterdir()):
            zf.write(path, f"{folder}{path.name}")
        for name, data in extra:
            zf.writestr(name, data)
    return archive


def _same_outputs(a, b, atol=1e-6):
    """The same model read two ways. Not bit for bit: on the CPU each product's kernel (MKL or oneDNN) is
    chosen per row count, and a shared model's token cache changes the char-CNN's row counts."""
    for x, y in zip(a.embed(SENTENCES), b.embed(SENTENCES)):
        np.testing.assert_allclose(x, y, rtol=0, atol=atol)


@pytest.fixture
def allennlp_dir(tmp_path):
    """The AllenNLP fixture under AllenNLP's release names, with a softmax beside it."""
    directory = tmp_path / "allennlp"
    directory.mkdir()
    shutil.copy(ALLENNLP_DIR / "options.json", directory / "elmo_2x64_16_options.json")
    shutil.copy(ALLENNLP_DIR / "lm_weights.hdf5", directory / "elmo_2x64_16_weights.hdf5")
    shutil.copy(ALLENNLP_DIR / "lm_weights.hdf5", directory / "softmax.hdf5")
    return directory


def test_bilm_tf_directory_is_the_options_and_weights_pair(allennlp_dir, fixture_bilm):
    layout = model_layout(allennlp_dir)
    assert (layout.format, layout.files["weights"]) == ("bilm-tf", "elmo_2x64_16_weights.hdf5")
    _same_outputs(load_bilm(allennlp_dir), fixture_bilm)


def test_nlpl_zip_with_its_folder_loads(tmp_path, fixture_bilm):
    source = tmp_path / "nlpl"
    source.mkdir()
    shutil.copy(ALLENNLP_DIR / "options.json", source / "options.json")
    shutil.copy(ALLENNLP_DIR / "lm_weights.hdf5", source / "model.hdf5")
    (source / "vocab.txt").write_text("<S>\n</S>\n<UNK>\n", encoding="utf8")
    (source / "meta.json").write_text(json.dumps({"id": 0, "corpus": []}), encoding="utf8")
    archive = _zip(source, tmp_path / "209.zip", folder="209/")
    assert model_layout(archive).format == "nlpl"
    assert model_options(archive).n_output_layers == fixture_bilm.n_layers
    _same_outputs(load_bilm(archive), fixture_bilm)


def test_manylangs_zip_and_directory_give_the_same_model(tmp_path):
    archive = _zip(MANYLANGS, tmp_path / "fr.zip", folder="fr.model/")
    assert model_layout(archive).format == "elmoformanylangs"
    assert model_options(archive).lstm.n_layers == 2
    _same_outputs(load_bilm(archive), load_bilm(MANYLANGS))


def test_bundled_name_and_options_weights_pair_still_load():
    options, weights = bundled_model_paths("fixture-tiny")
    _same_outputs(load_bilm("fixture-tiny"), load_bilm(options, weights))
    _same_outputs(load_bilm(options.parent), load_bilm(options, weights))


@pytest.mark.parametrize(
    "name, external_attr",
    [("../outside.txt", 0), ("/etc/outside.txt", 0), ("model\\..\\x", 0), ("link", (stat.S_IFLNK | 0o777) << 16)],
)
def test_unsafe_archive_members_are_refused(tmp_path, name, external_attr):
    archive = _zip(MANYLANGS, tmp_path / "bad.zip")
    with zipfile.ZipFile(archive, "a") as zf:
        info = zipfile.ZipInfo(name)
        info.external_attr = external_attr
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(ArchiveError, match="refusing to unpack"):
        load_bilm(archive)
    assert not (tmp_path / "outside.txt").exists()


def test_a_directory_without_a_model_names_what_it_expected(tmp_path):
    (tmp_path / "notes.txt").write_text("hello", encoding="utf8")
    with pytest.raises(InputFileError, match="config.json, token_embedder.pkl and encoder.pkl"):
        load_bilm(tmp_path)


def test_a_broken_zip_is_a_clear_error(tmp_path):
    archive = _zip(MANYLANGS, tmp_path / "m.zip")
    archive.write_bytes(archive.read_bytes()[:-200])
    with pytest.raises(InputFileError, match="m.zip"):
        load_bilm(archive)


def _elmo_nlp(lang, model):
    nlp = spacy.blank(lang)
    nlp.add_pipe("elmo", config={**elmo_config(**model), **EXACT_LAYERS})
    return nlp


def test_spacy_path_loads_and_to_disk_carries_the_model(tmp_path):
    """A pipeline saved with to_disk loads with spacy.load after the model's directory is gone."""
    source = tmp_path / "fr.model"
    shutil.copytree(MANYLANGS, source)
    nlp = _elmo_nlp("fr", {"path": str(source)})
    nlp.initialize()
    text = "Paris est très belle ."
    expected = nlp(text)._.elmo["layers"]
    np.testing.assert_allclose(expected, load_bilm(MANYLANGS).embed([text.split()])[0], atol=1e-6)
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(source)
    loaded = spacy.load(tmp_path / "pipeline")
    np.testing.assert_allclose(loaded(text)._.elmo["layers"], expected, atol=1e-6)


def test_spacy_path_and_options_are_exclusive():
    with pytest.raises(ValueError, match="not both"):
        _elmo_nlp("de", {"path": str(MANYLANGS), "name": "fixture-tiny"})


def test_initialize_takes_a_model_directory_as_options(tmp_path):
    """`--paths.elmo_options DIR` with the shipped configs: [initialize.components.elmo] options."""
    nlp = spacy.blank("ru")
    nlp.add_pipe("elmo", config=EXACT_LAYERS)
    nlp.get_pipe("elmo").initialize(lambda: [], nlp=nlp, options=str(MANYLANGS))
    text = "Москва — столица"
    np.testing.assert_allclose(nlp(text)._.elmo["layers"], load_bilm(MANYLANGS).embed([text.split()])[0], atol=1e-6)


def test_int8_fast_mode_runs_the_exact_model_for_manylangs():
    nlp = _elmo_nlp("fr", {"path": str(MANYLANGS), "fast_mode": "int8"})
    nlp.initialize()
    text = "Paris est très belle ."
    with pytest.warns(UserWarning, match="does not run ELMoForManyLangs"):
        layers = nlp(text)._.elmo["layers"]
    np.testing.assert_allclose(layers, load_bilm(MANYLANGS).embed([text.split()])[0], atol=1e-6)
