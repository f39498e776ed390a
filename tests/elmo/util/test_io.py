"""The one writer every file goes through (io.atomic_output) and the text readers: no half-written,
hijacked or forgotten files, a byte-order mark never read as text, a full disk named as such."""

import errno
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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

# Pieces of text files as bytes: line breaks of every kind, a byte-order mark, valid and broken UTF-8.
TEXT_PIECES = [
    b"a",
    b" ",
    b"\n",
    b"\r",
    b"\r\n",
    b"\xc3\xa9",
    b"\xe2\x82\xac",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
]


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


def test_a_bad_byte_is_reported_at_its_true_line(tmp_path):
    path = tmp_path / "text.txt"
    lines = [f"line {i} of the text , words and words" for i in range(5000)]
    path.write_bytes("\n".join(lines[:2999]).encode() + b"\nthe bad \xff byte\n" + "\n".join(lines[3000:]).encode())
    with pytest.raises(io.InputFileError, match=r"invalid start byte at line 3000\)"):
        list(text_lines(path, "text"))
    with pytest.raises(io.InputFileError, match=r"invalid start byte at line 3000\)"):
        read_text(path, "text")


def _read_with_each_reader():
    from spacy_elmo.elmo.pretrain.corpus import corpus_lines
    from spacy_elmo.elmo.pretrain.shards import pack_corpus
    from spacy_elmo.elmo.pretrain.vocab import Vocabulary, count_tokens

    return {
        "corpus": lambda path: list(corpus_lines(path, "corpus")),
        "vocabulary counts": lambda path: count_tokens([path]),
        "vocabulary": Vocabulary.from_file,
        "pack": lambda path: pack_corpus([path], path.parent / "packed", "c"),
    }


@pytest.mark.parametrize("reader", sorted(_read_with_each_reader()))
def test_every_reader_of_text_names_the_true_line(tmp_path, reader):
    path = tmp_path / "text.txt"
    lines = ["<S>", "</S>", "<UNK>"] + [f"word{i} and more words here" for i in range(997)]
    path.write_bytes(("\n".join(lines) + "\n").encode() * 3 + b"bad \xff\n")
    with pytest.raises(io.InputFileError, match=r"at line 3001\)"):
        _read_with_each_reader()[reader](path)


def _true_lines(data: bytes):
    """What a reader of `data` must give: its lines (universal newlines, no byte-order mark), or the line
    (from 1) of its first byte that is not UTF-8, found with Python's own decoder and line splitting."""
    from io import StringIO

    text = data.decode("utf-8-sig", errors="surrogateescape")
    lines = list(StringIO(text, newline=None))
    bad = [i for i, line in enumerate(lines) if any("\udc80" <= c <= "\udcff" for c in line)]
    return (None, bad[0] + 1) if bad else (lines, None)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=64) | st.lists(st.sampled_from(TEXT_PIECES), max_size=40).map(b"".join))
def test_any_bytes_read_as_their_lines_or_an_error_naming_the_true_line(tmp_path, data):
    path = tmp_path / "text.txt"
    path.write_bytes(data)
    lines, bad_line = _true_lines(data)
    for read in (lambda: list(text_lines(path, "text")), lambda: read_text(path, "text")):
        if lines is None:
            with pytest.raises(io.InputFileError, match=rf"at line {bad_line}\); is it the right file"):
                read()
        else:
            assert read() in (lines, "".join(lines))


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
