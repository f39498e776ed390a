"""The bilm-tf layout in safetensors (spacy_elmo/elmo/formats/bilm_safetensors.py): a folder of options.json
and model.safetensors loads by path, bit for bit the model it was written from, also with bilm-tf's
weights HDF5 beside it (as `export` writes them: one model, not two); the same checks as the HDF5's
refuse weights of another model, and a damaged file fails naming it."""

import shutil

import pytest
import safetensors.torch
import torch

from spacy_elmo import load_bilm
from spacy_elmo.elmo.formats import WeightsError, model_layout
from spacy_elmo.elmo.formats.bilm_safetensors import load_safetensors, save_safetensors
from spacy_elmo.elmo.nn.bilm import BiLM
from spacy_elmo.elmo.nn.options import with_changes
from tests.support.paths import ALLENNLP_DIR

SENTENCES = [["The", "bank", "by", "the", "river", "."], ["Money", "."]]


@pytest.fixture
def folder(tmp_path, fixture_bilm):
    shutil.copy(ALLENNLP_DIR / "options.json", tmp_path / "options.json")
    save_safetensors(fixture_bilm, tmp_path / "model.safetensors")
    return tmp_path


def test_a_safetensors_folder_loads_by_path_bit_for_bit(folder, fixture_bilm):
    assert model_layout(folder).format == "safetensors"
    loaded = load_bilm(folder)
    for (name, a), (_, b) in zip(loaded.state_dict().items(), fixture_bilm.state_dict().items()):
        assert torch.equal(a, b), name
    assert torch.equal(loaded.forward_sentences(SENTENCES).layers, fixture_bilm.forward_sentences(SENTENCES).layers)


def test_with_the_hdf5_beside_it_the_folder_is_one_model(folder):
    shutil.copy(ALLENNLP_DIR / "lm_weights.hdf5", folder / "lm_weights.hdf5")
    layout = model_layout(folder)
    assert (layout.format, layout.files["weights"], layout.files["hdf5"]) == (
        "safetensors",
        "model.safetensors",
        "lm_weights.hdf5",
    )


def test_its_tensors_are_bilm_tfs_datasets(folder):
    import h5py

    tensors = safetensors.torch.load_file(str(folder / "model.safetensors"))
    with h5py.File(ALLENNLP_DIR / "lm_weights.hdf5", "r") as f:
        names = []
        f.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
    assert sorted(tensors) == sorted(names)


def test_bfloat16_tensors_are_read_as_float32(folder, fixture_bilm):
    tensors = safetensors.torch.load_file(str(folder / "model.safetensors"))
    safetensors.torch.save_file(
        {k: v.to(torch.bfloat16) for k, v in tensors.items()}, str(folder / "model.safetensors")
    )
    loaded = load_bilm(folder)
    weight = loaded.char_encoder.highways[0].carry.weight
    assert torch.equal(weight, fixture_bilm.char_encoder.highways[0].carry.weight.to(torch.bfloat16).float())


def test_weights_of_another_model_are_refused_naming_the_dataset(tmp_path, fixture_bilm):
    other = BiLM(with_changes(fixture_bilm.options, {"lstm.n_layers": 1}))
    save_safetensors(fixture_bilm, tmp_path / "model.safetensors")
    with pytest.raises(WeightsError, match="datasets that the options do not use.*RNN_0"):
        load_safetensors(other, tmp_path / "model.safetensors")
    wider = BiLM(with_changes(fixture_bilm.options, {"lstm.projection_dim": 8}))
    with pytest.raises(WeightsError, match="dataset 'CNN_proj/W_proj' has shape"):
        load_safetensors(wider, tmp_path / "model.safetensors")


def test_a_damaged_file_fails_naming_it(folder):
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:64])
    with pytest.raises(WeightsError, match="not a readable safetensors file.*copy the model again") as info:
        load_bilm(folder)
    assert "model.safetensors" in str(info.value)
