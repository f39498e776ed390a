"""How `dump` stores a dataset (elmo/embed/storage.py): the dtype asked for, h5py's gzip or lzf behind the
shuffle filter in HDF5 1.10's format (no index outweighing a vector), a gzip level only with gzip, and
empty arrays stored plain."""

import h5py
import numpy as np
import pytest

from spacy_elmo.elmo.embed.storage import Storage
from spacy_elmo.elmo.errors import InputError

DATA = np.linspace(-1, 1, 3 * 7 * 16, dtype=np.float32).reshape(3, 7, 16)


@pytest.mark.parametrize(
    "storage,compression,opts",
    [
        (Storage(), None, None),
        (Storage("float16", "lzf"), "lzf", None),
        (Storage(compression="gzip", level=9), "gzip", 9),
    ],
)
def test_each_dataset_is_stored_as_asked(tmp_path, storage, compression, opts):
    with h5py.File(tmp_path / "f.hdf5", "w", **storage.file()) as f:
        f.create_dataset("0", **storage.dataset(DATA))
        f.create_dataset("1", **storage.dataset(np.zeros((3, 0, 16), dtype=np.float32)))
    with h5py.File(tmp_path / "f.hdf5", "r") as f:
        assert f["0"].dtype == np.dtype(storage.dtype)
        assert f["0"].compression == compression and f["0"].shuffle == (compression is not None)
        if opts is not None:
            assert f["0"].compression_opts == opts
        np.testing.assert_allclose(f["0"][()], DATA, rtol=1e-3 if storage.dtype == "float16" else 0)
        assert f["1"].shape == (3, 0, 16) and f["1"].compression is None


def test_a_compressed_file_of_small_vectors_is_no_larger_than_a_plain_one(tmp_path):
    sizes = {}
    for storage in (Storage("float16"), Storage("float16", "gzip")):
        path = tmp_path / f"{storage.compression}.hdf5"
        with h5py.File(path, "w", **storage.file()) as f:
            for i in range(200):
                f.create_dataset(str(i), **storage.dataset(DATA[0, i % 7]))
        sizes[storage.compression] = path.stat().st_size
    assert sizes["gzip"] <= sizes[None], sizes  # no per-dataset B-tree (HDF5 1.10's single-chunk index)


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: Storage("float64"), "dtype 'float64' is not one of float32, float16"),
        (lambda: Storage(compression="zstd"), "compression 'zstd' is not one of gzip, lzf"),
        (lambda: Storage(compression="lzf", level=3), "give --compression gzip with it"),
        (lambda: Storage(compression="gzip", level=10), "gzip's, 0 to 9"),
    ],
)
def test_bad_storage_is_named(make, message):
    with pytest.raises(InputError, match=message):
        make()
