"""Unpacking a download (elmo/sources/hub/unpack.py): the archive's members under the staging folder; a damaged or
unsafe archive deleted, with an error saying the same command fetches it afresh."""

import errno
import io
import tarfile
import zipfile

import pytest

from spacy_elmo.elmo.sources.hub import unpack
from spacy_elmo.elmo.sources.hub.errors import DiskFullError, DownloadError


def zip_of(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_members_are_unpacked_under_the_folder(tmp_path):
    archive = zip_of(tmp_path / "model.zip", {"model/options.json": "{}", "model/weights.hdf5": "w"})
    into = tmp_path / "staging"
    into.mkdir()
    unpack.unpack_archive(archive, into)
    assert (into / "model" / "options.json").read_text() == "{}"
    assert (into / "model" / "weights.hdf5").read_text() == "w"


def test_an_unsafe_member_deletes_the_archive_and_says_to_run_again(tmp_path):
    archive = tmp_path / "model.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(DownloadError, match="deleted and nothing was installed. Run the same command again"):
        unpack.unpack_archive(archive, tmp_path)
    assert not archive.exists() and not (tmp_path.parent / "escape.txt").exists()


def test_a_damaged_archive_is_deleted_and_named(tmp_path):
    archive = tmp_path / "model.zip"
    archive.write_bytes(zip_of(tmp_path / "whole.zip", {"options.json": "{}"}).read_bytes()[:-30])
    with pytest.raises(DownloadError, match="(?s)model.zip is damaged.*Run the same command again"):
        unpack.unpack_archive(archive, tmp_path)
    assert not archive.exists()


@pytest.mark.parametrize(
    "error, kind, message",
    [
        (OSError(errno.ENOSPC, "No space left on device"), DiskFullError, "has no room to unpack .*model.zip"),
        (OSError(errno.EROFS, "Read-only file system"), DownloadError, "cannot unpack .*model.zip into .*staging"),
    ],
)
def test_an_os_error_while_unpacking_names_the_archive_and_keeps_it(tmp_path, monkeypatch, error, kind, message):
    """A full disk is a DiskFullError; another OS error a DownloadError naming both paths."""
    archive = zip_of(tmp_path / "model.zip", {"options.json": "{}"})

    def failing(archive, into):
        raise error

    monkeypatch.setattr(unpack, "extract", failing)
    with pytest.raises(kind, match=message):
        unpack.unpack_archive(archive, tmp_path / "staging")
    assert archive.exists()
