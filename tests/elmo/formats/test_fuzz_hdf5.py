"""Damaged HDF5 weights: flipped bytes in a weights file's structure (superblock, object headers,
B-trees) give the package's WeightsError naming the file, never h5py's RuntimeError or KeyError. Flips
inside a dataset's values load as other weights: HDF5 keeps no checksum of them (a downloaded model's
files have their sha256 in its record)."""

import random

import h5py
import pytest

from spacy_elmo.elmo.formats.bilm_tf import load_options_and_weights, load_weights
from spacy_elmo.elmo.formats.errors import WeightsError
from spacy_elmo.elmo.nn.options import ElmoOptions
from tests.support.paths import ALLENNLP_DIR

WEIGHTS = ALLENNLP_DIR / "lm_weights.hdf5"


@pytest.fixture(scope="module")
def bilm():
    return load_options_and_weights(ElmoOptions.from_file(ALLENNLP_DIR / "options.json"), None)


def _object_header(dataset: str) -> int:
    with h5py.File(WEIGHTS, "r") as f:
        return h5py.h5o.get_info(f[dataset].id).addr


def test_a_damaged_object_header_names_the_weights_file(tmp_path, bilm):
    raw = bytearray(WEIGHTS.read_bytes())
    raw[_object_header("char_embed")] = 7  # the header's version number: HDF5 knows 1 and 2
    damaged = tmp_path / "weights.hdf5"
    damaged.write_bytes(bytes(raw))
    with pytest.raises(WeightsError, match=rf"weights file {damaged} is damaged: HDF5 cannot read its structure"):
        load_weights(bilm, damaged)


def test_seeded_byte_flips_load_or_fail_with_the_weights_error(tmp_path, bilm):
    rng = random.Random(43)
    source = WEIGHTS.read_bytes()
    structure_end = 4096  # superblock, root group and the first object headers: where flips break the file
    refused = 0
    for trial in range(120):
        raw = bytearray(source)
        position = rng.randrange(structure_end) if rng.random() < 0.8 else rng.randrange(len(raw))
        raw[position] ^= 1 << rng.randrange(8)
        damaged = tmp_path / f"{trial}.hdf5"
        damaged.write_bytes(bytes(raw))
        try:
            load_weights(bilm, damaged)
        except WeightsError as err:
            assert str(damaged) in str(err), f"trial {trial}, byte {position}"
            refused += 1
        damaged.unlink()
    assert refused > 8  # the loop did reach the structure


def test_a_downloaded_model_with_a_damaged_header_is_reported_not_raised(tmp_path):
    """`download` checks an assembled model before installing it (elmo/sources/hub/file_checks.py): damaged
    HDF5 metadata is a problem it names, not h5py's RuntimeError out of the check."""
    from spacy_elmo.elmo.sources.hub.file_checks import model_problem

    raw = bytearray(WEIGHTS.read_bytes())
    raw[_object_header("CNN")] = 7  # a group the check walks into
    (tmp_path / "weights.hdf5").write_bytes(bytes(raw))
    (tmp_path / "options.json").write_bytes((ALLENNLP_DIR / "options.json").read_bytes())
    assert "weights.hdf5" in model_problem(tmp_path)
