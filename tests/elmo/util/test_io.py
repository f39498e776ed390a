"""The one writer every file goes through (io.atomic_output) and the text readers: no half-written,
hijacked or forgotten files, a byte-order mark never read as text, a full disk named as such."""

import errno
import os
import subprocess
import sys

import pytest

from spacy_elmo.elmo.util import io
from spacy_elmo.elmo.util.io import (
    DiskFullError,
    OutputFileError,
    atomic_output,
    atomic_stream,
    check_room,
    check_writable_folder,
    read_text,
    remove_stale_temps,
    temp_name_host,
    text_lines,
)
from tests.support.full_disk import FullDiskFile


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_output_replaced_only_when_the_block_finishes(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_output(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]  # the temporary file is gone too
    with atomic_output(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["out.txt"]


def test_temporary_names_are_unpredictable_and_never_follow_a_planted_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "out.txt"
    # Links at the names a writer could be guessed to use: the process id alone, or a counter.
    for name in [f".out.txt.{os.getpid()}.tmp", "out.txt.tmp", ".out.txt.tmp"]:
        (tmp_path / name).symlink_to(victim)
    names = []
    for _ in range(2):
        with atomic_output(target) as tmp:
            assert not tmp.is_symlink() and tmp.stat().st_size == 0
            names.append(tmp.name)
            tmp.write_text("output")
    assert names[0] != names[1]
    assert victim.read_text() == "precious"
    assert target.read_text() == "output" and not target.is_symlink()


def test_temps_of_a_killed_writer_are_removed_by_the_next_write_and_a_live_ones_kept(tmp_path):
    target = tmp_path / "layers.hdf5"
    host = temp_name_host()
    killed = tmp_path / f".layers.hdf5.{host}.{dead_pid()}.k2j4x9q1.tmp"
    killed.write_bytes(b"x" * 1000)
    live = tmp_path / f".layers.hdf5.{host}.{os.getpid()}.live0001.tmp"
    live.write_bytes(b"y")
    other = tmp_path / f".other.hdf5.{host}.{dead_pid()}.abcdefgh.tmp"
    other.write_bytes(b"z")
    with atomic_output(target) as tmp:
        tmp.write_bytes(b"data")
    assert not killed.exists() and live.exists() and other.exists()
    remove_stale_temps(tmp_path)
    assert not other.exists() and live.exists()


def test_temps_of_another_machine_on_shared_storage_are_left_to_it(tmp_path):
    """A process id is only this machine's: another node's writer is never judged dead by it."""
    target = tmp_path / "layers.hdf5"
    elsewhere = [
        tmp_path / f".layers.hdf5.{name}.{dead_pid()}.k2j4x9q1.tmp"
        for name in (f"not-{temp_name_host()}", f"{temp_name_host()}-2")
    ]
    for path in elsewhere:
        path.write_bytes(b"x")
    with atomic_output(target) as tmp:
        assert tmp.name.startswith(f".layers.hdf5.{temp_name_host()}.{os.getpid()}.")
        tmp.write_bytes(b"data")
    remove_stale_temps(tmp_path)
    assert all(path.exists() for path in elsewhere)


def test_files_get_the_usual_permissions(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_output(target) as tmp:
        tmp.write_text("x")
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def _full_after_64_bytes(path, mode="r", **kwargs):
    return FullDiskFile(open(path, mode, **kwargs), allowed=64)


def test_a_full_disk_names_the_file_even_through_torch(tmp_path, monkeypatch):
    import torch

    target = tmp_path / "checkpoint.pt"
    torch.save({"step": 1}, target)
    monkeypatch.setattr(io, "open", _full_after_64_bytes, raising=False)
    with pytest.raises(OutputFileError, match="no space left on the device") as caught:
        with atomic_stream(target) as f:
            torch.save({"weights": torch.zeros(10_000)}, f)
    assert str(target) in str(caught.value) and "unexpected pos" not in str(caught.value)
    assert torch.load(target)["step"] == 1
    assert os.listdir(tmp_path) == ["checkpoint.pt"]


def test_a_full_disk_on_a_plain_write_names_the_file(tmp_path):
    target = tmp_path / "vocab.txt"

    with pytest.raises(OutputFileError, match=f"cannot write {target}: no space left on the device"):
        with atomic_output(target):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert not target.exists()


def test_a_byte_order_mark_is_not_text(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("\ufeffword next\nsecond\n", encoding="utf8")
    assert read_text(path, "text").startswith("word next")
    assert list(text_lines(path, "text")) == ["word next\n", "second\n"]


def test_file_digests_hash_several_files_as_one_stream_and_copy_it(tmp_path):
    import hashlib

    parts = [tmp_path / f"part-{i}" for i in range(3)]
    for i, part in enumerate(parts):
        part.write_bytes(bytes([i]) * (1 << 20) + b"tail%d" % i)  # crosses the 1 MiB block size
    joined = b"".join(part.read_bytes() for part in parts)
    with open(tmp_path / "joined", "wb") as out:
        digests = io.file_digests(parts, ("sha256", "sha1"), copy_to=out)
    assert digests == {"sha256": hashlib.sha256(joined).hexdigest(), "sha1": hashlib.sha1(joined).hexdigest()}
    assert (tmp_path / "joined").read_bytes() == joined
    assert io.file_sha256(parts[0]) == hashlib.sha256(parts[0].read_bytes()).hexdigest()
    with pytest.raises(io.InputFileError, match=r"part .*missing cannot be read"):
        io.file_digests([tmp_path / "missing"], ("sha256",), "part")


def test_a_read_only_folder_is_refused_by_name_and_nothing_is_written(tmp_path, read_only_folder):
    locked = read_only_folder(tmp_path / "locked")
    with pytest.raises(OutputFileError, match=f"cannot write in output folder {locked}: read-only file system"):
        check_writable_folder(locked)
    with pytest.raises(OutputFileError, match=rf"folder {locked / 'a' / 'b'} \(to be made in {locked}\): read-only"):
        check_writable_folder(locked / "a" / "b")
    check_writable_folder(tmp_path / "new" / "folder")
    assert not (tmp_path / "new").exists()


def test_room_is_checked_on_the_disk_that_will_hold_the_file(full_disk):
    disk = full_disk(1 << 20)
    check_room(disk / "new" / "out.bin", 1 << 19)
    with pytest.raises(
        DiskFullError, match=rf"cannot write {disk / 'new' / 'out.bin'}: it needs 2.0 MiB, .* 1.0 MiB free"
    ):
        check_room(disk / "new" / "out.bin", 2 << 20)
