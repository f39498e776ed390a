"""The one archive reader (spacy_elmo/elmo/formats/archive.py) through `load_bilm`: zip and tar / tar.gz,
bounded in declared size and member count, every damaged or unsafe archive an ArchiveError naming the
file; and the one check for names that become paths."""

import io
import struct
import tarfile
import zipfile

import numpy as np
import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.formats import ArchiveError, model_layout
from spacy_elmo.elmo.formats import archive as archive_module
from spacy_elmo.elmo.formats.archive import unsafe_name_reason
from tests.support.paths import TINY_MODEL

TINY_FILES = [(p.name, p.read_bytes()) for p in sorted(TINY_MODEL.iterdir()) if p.suffix != ".md"]


def _zip(path, entries, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return path


def _tar(path, entries, mode="w:gz"):
    """A tar of (TarInfo or name, bytes or None) pairs; a TarInfo with no bytes is written as a header only."""
    with tarfile.open(path, mode) as tf:
        for info, data in entries:
            if isinstance(info, str):
                info = tarfile.TarInfo(info)
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _declare_sizes(path, size):
    """Rewrite every central-directory entry of the zip at `path` to declare `size` bytes unpacked."""
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        struct.pack_into("<I", data, at + 24, size)
        at = data.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(data))


def _same(a, b):
    for x, y in zip(a.embed([["a", "test"]]), b.embed([["a", "test"]])):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name, mode", [("tiny.tar.gz", "w:gz"), ("tiny.tar", "w"), ("tiny.tgz", "w:gz")])
def test_a_tar_archive_loads_like_the_directory(tmp_path, name, mode):
    archive = _tar(tmp_path / name, [(f"tiny/{n}", d) for n, d in TINY_FILES], mode)
    assert model_layout(archive).root == "tiny"
    _same(load_bilm(archive), load_bilm(TINY_MODEL))


def test_a_zip_declaring_tens_of_gigabytes_is_refused_before_unpacking(tmp_path):
    archive = _zip(tmp_path / "huge.zip", [*TINY_FILES, ("a.bin", b"x"), ("b.bin", b"x"), ("c.bin", b"x")])
    _declare_sizes(archive, 0xFFFFFFF0)  # 5 members x 4 GB
    with pytest.raises(ArchiveError, match="huge.zip declares more than"):
        load_bilm(archive)


def test_a_tar_declaring_tens_of_gigabytes_is_refused_before_reading_it(tmp_path):
    huge = tarfile.TarInfo("weights.hdf5")
    huge.size = 20 << 30
    archive = _tar(tmp_path / "huge.tar.gz", [("options.json", b"{}"), (huge, None)])
    with pytest.raises(ArchiveError, match="huge.tar.gz declares more than"):
        load_bilm(archive)


def test_an_archive_with_too_many_members_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(archive_module, "MAX_MEMBERS", 3)
    archive = _zip(tmp_path / "many.zip", [*TINY_FILES, ("a", b""), ("b", b"")])
    with pytest.raises(ArchiveError, match="more than 3 members"):
        load_bilm(archive)


@pytest.mark.parametrize("name", ["m.zip", "m.tar.gz"])
def test_a_truncated_archive_is_diagnosed_as_an_archive(tmp_path, name):
    path = tmp_path / name
    if name.endswith(".zip"):
        _zip(path, TINY_FILES)
    else:
        _tar(path, TINY_FILES)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ArchiveError, match=f"{name} is damaged") as err:
        load_bilm(path)
    assert "UTF-8" not in str(err.value)


def test_a_gzip_that_is_no_tar_is_diagnosed_as_an_archive(tmp_path):
    import gzip

    path = tmp_path / "weights.hdf5.gz"
    path.write_bytes(gzip.compress((TINY_MODEL / "weights.hdf5").read_bytes()))
    with pytest.raises(ArchiveError, match="not a zip or tar archive"):
        load_bilm(path)


def test_a_damaged_deflate_stream_is_an_archive_error(tmp_path):
    archive = _zip(tmp_path / "deflate.zip", TINY_FILES, zipfile.ZIP_DEFLATED)
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        info = zf.getinfo("weights.hdf5")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start + 10, start + info.compress_size - 10):
        data[i] ^= 0x55
    archive.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="deflate.zip is damaged"):
        load_bilm(archive)


def _link(name, kind, target):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


@pytest.mark.parametrize(
    "member",
    [
        _link("weights.hdf5", tarfile.SYMTYPE, "/etc/passwd"),
        _link("weights.hdf5", tarfile.LNKTYPE, "options.json"),
        ("../weights.hdf5", b"x"),
        ("/tmp/weights.hdf5", b"x"),
    ],
)
def test_unsafe_tar_members_are_refused(tmp_path, member):
    archive = _tar(tmp_path / "bad.tar.gz", [("options.json", b"{}"), member])
    with pytest.raises(ArchiveError, match="refusing to unpack"):
        load_bilm(archive)
    assert not (tmp_path / "weights.hdf5").exists()


SAFE_NAMES = [("weights.hdf5", True), ("model/weights.hdf5", False)]  # (name, as a single file name)
UNSAFE_FILE_NAMES = ["model/weights.hdf5", "..", "", ".", ".hidden", "a\nb"]
UNSAFE_PATHS = ["a/../../b", "/etc/passwd", "C:evil", "a\\b"]


@pytest.mark.parametrize(
    "name, single, bad",
    [(name, single, False) for name, single in SAFE_NAMES]
    + [(name, True, True) for name in UNSAFE_FILE_NAMES]
    + [(name, False, True) for name in UNSAFE_PATHS],
)
def test_one_check_for_names_that_become_paths(name, single, bad):
    assert bool(unsafe_name_reason(name, single=single)) == bad
