"""HDF5 files checked where h5py would not (elmo/util/hdf5.py): a file read must hold its own data (no
external storage, external links or virtual datasets, refused before a byte is read, so a FIFO as the
external file cannot hang the load) and may not declare more data than it holds; a file written fails
at the write that fails."""

import os
import shutil

import h5py
import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import InputFileError
from spacy_elmo.elmo.formats.errors import WeightsError
from spacy_elmo.elmo.util.hdf5 import create_hdf5
from spacy_elmo.elmo.util.io import open_hdf5
from tests.support.paths import ALLENNLP_DIR

VALUES = np.arange(12, dtype=np.float32).reshape(3, 4)


def _external_storage(folder, target):
    """A file whose one dataset keeps its bytes in `target`."""
    path = folder / "external.hdf5"
    with h5py.File(path, "w") as f:
        f.create_dataset("weights", shape=VALUES.shape, dtype=VALUES.dtype, external=[(str(target), 0, VALUES.nbytes)])
    return path


def test_a_file_holding_its_data_opens(tmp_path):
    path = tmp_path / "inside.hdf5"
    with h5py.File(path, "w") as f:
        f.create_dataset("group/weights", data=VALUES)
        f.create_dataset("packed", data=np.zeros((512, 512), np.float32), compression="gzip")
        f["alias"] = h5py.SoftLink("/group/weights")
    with open_hdf5(path, "test") as f:
        np.testing.assert_array_equal(f["alias"][()], VALUES)


def test_external_raw_storage_is_refused_naming_the_dataset(tmp_path):
    raw = tmp_path / "raw.bin"
    raw.write_bytes(VALUES.tobytes())
    with pytest.raises(
        InputFileError, match="dataset 'weights' keeps its data in the external file .*raw.bin.*must be inside"
    ):
        open_hdf5(_external_storage(tmp_path, raw), "test")


@pytest.mark.timeout(30)
def test_external_storage_on_a_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="dataset 'weights' keeps its data in the external file"):
        open_hdf5(_external_storage(tmp_path, fifo), "test")


def test_an_external_link_is_refused_and_not_followed(tmp_path):
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as f:
        f.create_dataset("weights", data=VALUES)
    path = tmp_path / "linked.hdf5"
    with h5py.File(path, "w") as f:
        f["group/weights"] = h5py.ExternalLink(str(other), "/weights")
    other.unlink()  # followed, the link would fail as a missing file instead
    with pytest.raises(InputFileError, match=r"'group/weights' is an external link to .*other.hdf5:/weights"):
        open_hdf5(path, "test")


def test_a_virtual_dataset_is_refused(tmp_path):
    source = tmp_path / "source.hdf5"
    with h5py.File(source, "w") as f:
        f.create_dataset("weights", data=VALUES)
    layout = h5py.VirtualLayout(shape=VALUES.shape, dtype=VALUES.dtype)
    layout[:] = h5py.VirtualSource(str(source), "weights", shape=VALUES.shape)
    path = tmp_path / "virtual.hdf5"
    with h5py.File(path, "w") as f:
        f.create_virtual_dataset("weights", layout)
    with pytest.raises(InputFileError, match="dataset 'weights' is a virtual dataset"):
        open_hdf5(path, "test")


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_a_shape_the_file_cannot_hold_is_refused_before_reading(tmp_path, compression):
    path = tmp_path / "bomb.hdf5"
    with h5py.File(path, "w") as f:
        chunks = (1 << 20, 16) if compression else None
        f.create_dataset(
            "softmax/W", shape=(2_000_000_000, 16), dtype=np.float32, compression=compression, chunks=chunks
        )
    assert path.stat().st_size < 1 << 16
    with pytest.raises(InputFileError, match=r"dataset 'softmax/W' declares shape \(2000000000, 16\) of float32"):
        open_hdf5(path, "softmax")


def test_published_weights_with_one_dataset_moved_out_do_not_load(tmp_path):
    weights = tmp_path / "lm_weights.hdf5"
    shutil.copy(ALLENNLP_DIR / "lm_weights.hdf5", weights)
    raw = tmp_path / "char_embed.bin"
    with h5py.File(weights, "a") as f:
        values = f["char_embed"][()]
        raw.write_bytes(values.tobytes())
        del f["char_embed"]
        f.create_dataset("char_embed", shape=values.shape, dtype=values.dtype, external=[(str(raw), 0, values.nbytes)])
    with pytest.raises(
        WeightsError, match=f"weights file {weights}: dataset 'char_embed' keeps its data in the external"
    ):
        load_bilm(ALLENNLP_DIR / "options.json", weights)


def test_a_written_file_fails_at_the_write_that_fails(tmp_path, full_disk):
    disk = full_disk(1 << 20)
    # The failed write's OSError, or the failed close's RuntimeError that HDF5 raises after it.
    with pytest.raises((OSError, RuntimeError), match="No space left on device"), create_hdf5(disk / "out.hdf5") as f:
        for i in range(100):
            f.create_dataset(str(i), data=np.ones((3, 64, 32), np.float32))  # a sentence's layers
    assert 0 < i < 99
