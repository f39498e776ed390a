"""Weights files, fuzzed: bilm-tf's HDF5 layout with a dataset of another dtype or shape, a group in
its place, missing, extra or non-finite, and mutated bytes; safetensors files mutated. Each loads
(only where it still holds the weights, as floats) or fails with the weights error naming the file, and
what loads gives finite vectors or refuses to."""

import shutil

import h5py
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.formats import load_model
from spacy_elmo.elmo.formats.bilm_safetensors import save_safetensors
from tests.support.fuzz import RUNS, embeds_finite_or_refuses, fuzz_file, fuzz_settings, mutated
from tests.support.hdf5_changes import CHANGES, LOADABLE
from tests.support.paths import ALLENNLP_DIR

OPTIONS, WEIGHTS = ALLENNLP_DIR / "options.json", ALLENNLP_DIR / "lm_weights.hdf5"
DATASETS: list = []
with h5py.File(WEIGHTS, "r") as _f:
    _f.visititems(lambda name, item: DATASETS.append(name) if isinstance(item, h5py.Dataset) else None)


def _loads_finite_or_names(path, load):
    """`load()` gives a biLM with finite parameters, or an InputFileError naming `path`; which one."""
    try:
        bilm = load()
    except InputFileError as err:
        assert str(path) in str(err), err
        return False
    assert all(torch.isfinite(p).all() for p in bilm.parameters())
    embeds_finite_or_refuses(bilm)
    return True


@pytest.mark.parametrize("slow", RUNS)
def test_a_changed_dataset_loads_only_while_it_holds_the_weights(slow, tmp_path):
    weights = tmp_path / "weights.hdf5"

    @fuzz_settings(slow)
    @given(name=st.sampled_from(DATASETS), change=st.sampled_from(sorted(CHANGES)))
    def check(name, change):
        shutil.copyfile(WEIGHTS, weights)
        with h5py.File(weights, "a") as f:
            CHANGES[change](f, name)
        assert _loads_finite_or_names(weights, lambda: load_bilm(OPTIONS, weights)) == (change in LOADABLE)

    check()


@pytest.mark.parametrize("slow", RUNS)
def test_mutated_weights_bytes_load_or_fail_naming_the_file(slow, tmp_path):
    def read(weights):
        _loads_finite_or_names(weights, lambda: load_bilm(OPTIONS, weights))

    fuzz_file(slow, tmp_path / "weights.hdf5", WEIGHTS.read_bytes(), read)


@pytest.mark.parametrize("slow", RUNS)
def test_mutated_safetensors_load_or_fail_naming_the_file(slow, tmp_path, fixture_bilm):
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copyfile(OPTIONS, folder / "options.json")
    save_safetensors(fixture_bilm, folder / "model.safetensors")
    valid = (folder / "model.safetensors").read_bytes()
    header_end = 8 + int.from_bytes(valid[:8], "little")

    @fuzz_settings(slow)
    @given(in_header=st.booleans(), data=st.data())
    def check(in_header, data):
        raw = data.draw(mutated(valid[:header_end])) + valid[header_end:] if in_header else data.draw(mutated(valid))
        (folder / "model.safetensors").write_bytes(raw)
        loaded = _loads_finite_or_names(folder / "model.safetensors", lambda: load_model(folder))
        if loaded and in_header:  # the header names, types and places every tensor: none may move silently
            for ours, theirs in zip(load_model(folder).state_dict().values(), fixture_bilm.state_dict().values()):
                torch.testing.assert_close(ours, theirs, rtol=0, atol=0)

    check()
