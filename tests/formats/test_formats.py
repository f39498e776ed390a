"""One loader for every published format: directories and zip archives told apart by their files,
archives read safely, ELMoForManyLangs' weight files refused unless they are plain tensor state dicts,
and the `path` of `spacy-elmo.BiLM.v2`."""

import json
import pickle
import shutil
import stat
import zipfile

import numpy as np
import pytest
import spacy
import torch

from spacy_elmo import load_bilm
from spacy_elmo.errors import InputFileError
from spacy_elmo.formats import ArchiveError, ModelFormatError, WeightsError, model_layout, model_options
from spacy_elmo.formats.manylangs_chars import parse_dic
from spacy_elmo.models import bundled_model_paths
from tests.support.paths import ALLENNLP_DIR, MANYLANGS_DIR
from tests.support.pipelines import elmo_config

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
    with pytest.raises(ModelFormatError, match="config.json, token_embedder.pkl and encoder.pkl"):
        load_bilm(tmp_path)


def test_a_broken_zip_is_a_clear_error(tmp_path):
    archive = _zip(MANYLANGS, tmp_path / "m.zip")
    archive.write_bytes(archive.read_bytes()[:-200])
    with pytest.raises(InputFileError, match="m.zip"):
        load_bilm(archive)


class NotATensor:
    pass


@pytest.mark.parametrize(
    "payload, message",
    [
        ({"projection.weight": NotATensor()}, "not a plain torch state dict"),
        ([torch.zeros(2)], "holds a list"),
        ({"projection.weight": 3}, "not a state dict of tensors"),
    ],
)
def test_weight_files_that_are_not_tensor_state_dicts_are_refused(tmp_path, payload, message):
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    torch.save(payload, model / "encoder.pkl")
    with pytest.raises(WeightsError, match=f"encoder.pkl.*{message}|{message}.*encoder.pkl"):
        load_bilm(model)


def test_a_pickle_with_code_is_never_run(tmp_path):
    class Boom:
        def __reduce__(self):
            return (shutil.rmtree, (str(tmp_path / "victim"),))

    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    (tmp_path / "victim").mkdir()
    (model / "token_embedder.pkl").write_bytes(pickle.dumps(Boom(), protocol=2))
    with pytest.raises(WeightsError, match="token_embedder.pkl"):
        load_bilm(model)
    assert (tmp_path / "victim").exists()


def test_weights_of_another_size_name_the_tensor(tmp_path):
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    config = json.loads((model / "cnn_model_config.json").read_text(encoding="utf8"))
    config["encoder"]["dim"] = 32
    (model / "cnn_model_config.json").write_text(json.dumps(config), encoding="utf8")
    with pytest.raises(WeightsError, match="input_linearity.weight' has shape"):
        load_bilm(model)


def test_the_config_path_falls_back_as_its_code_does(tmp_path):
    """config.json names a path on its authors' machine; the file of that name in the directory is
    used, and a name that is not there either is an error naming both."""
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    (model / "config.json").write_text(
        json.dumps({"config_path": str(tmp_path / "authors-machine" / "other.json")}), encoding="utf8"
    )
    with pytest.raises(InputFileError, match="other.json"):
        load_bilm(model)


def test_dic_lines_are_read_as_its_reader_reads_them():
    # Stripped, then split at the tab: the space before the tab stays part of the token.
    assert parse_dic("a\t0\n\u3000\t1\n b \t2\n", "x.dic") == {"a": 0, "\u3000": 1, "b ": 2}
    with pytest.raises(InputFileError, match="x.dic, line 2"):
        parse_dic("a\t0\nb\tc\n", "x.dic")


def _elmo_nlp(lang, model):
    nlp = spacy.blank(lang)
    nlp.add_pipe("elmo", config=elmo_config(**model))
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
    nlp.add_pipe("elmo")
    nlp.get_pipe("elmo").initialize(lambda: [], nlp=nlp, options=str(MANYLANGS))
    text = "Москва — столица"
    np.testing.assert_allclose(nlp(text)._.elmo["layers"], load_bilm(MANYLANGS).embed([text.split()])[0], atol=1e-6)


def test_old_pickles_saved_from_a_gpu_load_on_the_cpu(tmp_path):
    """The released .pkl files are the pre-zip pickle format, some saved from a GPU: the storages name
    `torch.cuda` and the location 'cuda:0'. Rewriting a CPU-saved fixture into that form makes one."""
    model = tmp_path / "model"
    shutil.copytree(MANYLANGS, model)
    for name in ("token_embedder.pkl", "encoder.pkl"):
        data = (model / name).read_bytes()
        assert b"ctorch\nFloatStorage\n" in data and b"X\x03\x00\x00\x00cpu" in data
        data = data.replace(b"ctorch\nFloatStorage\n", b"ctorch.cuda\nFloatStorage\n")
        (model / name).write_bytes(data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"))
    _same_outputs(load_bilm(model), load_bilm(MANYLANGS))


def test_int8_fast_mode_runs_the_exact_model_for_manylangs():
    nlp = _elmo_nlp("fr", {"path": str(MANYLANGS), "fast_mode": "int8"})
    nlp.initialize()
    text = "Paris est très belle ."
    with pytest.warns(UserWarning, match="does not run ELMoForManyLangs"):
        layers = nlp(text)._.elmo["layers"]
    np.testing.assert_allclose(layers, load_bilm(MANYLANGS).embed([text.split()])[0], atol=1e-6)
