"""A trained language model as files (elmo/pretrain/export.py): the exported pair computes the trainer's
activations, and the softmax travels beside it."""

import json

import h5py
import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.elmo.formats.errors import WeightsError
from spacy_elmo.elmo.pretrain import load_language_model
from spacy_elmo.elmo.pretrain.checkpoint import CHECKPOINT_FILE, load_checkpoint
from spacy_elmo.elmo.pretrain.model import LanguageModel
from tests.support.hdf5_changes import CHANGES
from tests.support.pretraining import TRAIN_SENTENCES as SENTENCES
from tests.support.pretraining import untrained_export, with_softmax_bomb


def test_export_reproduces_the_trainers_activations(short_run):
    out, _ = short_run
    model, vocab = load_language_model(out)
    checkpoint = load_checkpoint(out / CHECKPOINT_FILE)
    trainer_model = LanguageModel(model.options, len(vocab))
    trainer_model.load_state_dict(checkpoint["model"])
    trainer_model.eval()
    exported = load_bilm(out / "options.json", out / "weights.hdf5")
    sentences = SENTENCES[:3] + [["unseen", "wordz", "!"]]
    for ours, theirs in zip(trainer_model.bilm.embed(sentences), exported.embed(sentences)):
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert torch.equal(model.softmax.weight, trainer_model.softmax.weight)
    assert json.loads((out / "options.json").read_text())["char_cnn"]["n_characters"] == 262


def test_a_softmax_declaring_more_than_its_file_holds_is_refused_before_allocating(short_run, tmp_path):
    run = with_softmax_bomb(short_run[0], tmp_path)
    with pytest.raises(
        WeightsError, match=r"softmax file .*softmax.hdf5: dataset 'softmax/W' declares shape \(2000000000, 16\)"
    ):
        load_language_model(run)


@pytest.mark.parametrize(
    "change, message",
    [
        ("a group", r"softmax/W is an HDF5 group, not a dataset of weights"),
        ("strings", r"dataset 'softmax/W' holds \|S\d+ values, not floating-point numbers"),
        ("int32", r"dataset 'softmax/W' holds int32 values"),
        ("NaN", r"dataset 'softmax/W' has 1 NaN or infinite value"),
    ],
)
def test_a_softmax_of_no_finite_floats_is_refused(tmp_path, change, message):
    model_dir = untrained_export(tmp_path / "model")
    with h5py.File(model_dir / "softmax.hdf5", "a") as f:
        CHANGES[change](f, "softmax/W")
    with pytest.raises(WeightsError, match=message):
        load_language_model(model_dir)


@pytest.mark.parametrize(
    "byte, mask, message",
    [
        (856, 0x80, "is damaged: HDF5 cannot read its structure"),  # h5py's link visitor: SystemError
        (1864, 0x01, "cannot be read .*dataspace dim 0 size of 33"),  # opening softmax/b: KeyError
    ],
)
def test_a_softmax_with_one_flipped_bit_the_fuzz_suite_found_is_refused(tmp_path, byte, mask, message):
    model_dir = untrained_export(tmp_path / "model")
    raw = bytearray((model_dir / "softmax.hdf5").read_bytes())
    raw[byte] ^= mask
    (model_dir / "softmax.hdf5").write_bytes(bytes(raw))
    with pytest.raises(WeightsError, match=f"softmax file .*softmax.hdf5 {message}"):
        load_language_model(model_dir)


def test_a_folder_without_softmax_and_vocabulary_is_told_what_perplexity_needs(short_run, tmp_path):
    import shutil

    folder = tmp_path / "biLM-only"
    shutil.copytree(short_run[0], folder)
    (folder / "softmax.hdf5").unlink()
    (folder / "vocab.txt").unlink()
    with pytest.raises(WeightsError, match="no softmax.hdf5 and no vocab.txt: perplexity scores"):
        load_language_model(folder)
    (folder / "weights.hdf5").unlink()
    with pytest.raises(WeightsError, match="no softmax.hdf5 and no vocab.txt"):
        load_language_model(folder)
