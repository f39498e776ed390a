"""Reading the user's files with errors that name them, writing files that are never half-written,
and cheap file statistics."""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
from io import StringIO
from pathlib import Path
from typing import Any, BinaryIO, Dict, Iterator, Optional, Sequence, Type, Union

import h5py

from ..errors import DiskFullError, ElmoError, InputFileError, OutputFileError
from .hdf5 import check_self_contained

# A write that failed with less free space than this left on the device is reported as a full disk:
# torch and h5py do not always pass the ENOSPC of the failed write on (torch says "unexpected pos").
_NEARLY_FULL = 1 << 20


def _read_umask() -> int:
    """The process's umask, read once at import: from /proc where there is one, else by setting it
    and back (os.umask can only be read that way)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_read_umask()


def temp_name_host() -> str:
    """This machine's name as temporary names carry it (letters, digits and '-'): beside the process id,
    so that a folder on shared storage (NFS, a cluster's output folder) tells one node's writers from
    another's, whose process ids mean nothing here."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"


def remove_stale_temps(folder: Union[str, Path], name: str = "*") -> None:
    """Delete the temporary files of `atomic_output` in `folder` (of the output `name`, or all) that
    writers on this machine which were killed left behind: their process is gone. A live writer's
    temporary file (another process writing the same output) is left alone, and so is every file of
    another machine, whose processes cannot be seen from here."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    host = temp_name_host()
    for stray in folder.glob(f".{name}.{host}.*.tmp"):
        parts = stray.name[: -len(".tmp")].rsplit(".", 3)  # ".NAME", HOST, PID, RANDOM
        if len(parts) != 4 or parts[1] != host or not parts[2].isdigit() or _process_alive(int(parts[2])):
            continue
        with contextlib.suppress(OSError):
            stray.unlink()


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_disk_full(err: BaseException, folder: Path) -> bool:
    if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if "No space left on device" in str(err) or "errno = 28" in str(err):
        return True
    try:
        return shutil.disk_usage(folder).free < _NEARLY_FULL
    except OSError:
        return False


@contextlib.contextmanager
def atomic_output(path: Union[str, Path]) -> Iterator[Path]:
    """Yield a new, empty temporary file beside `path`; it replaces `path` only if the block finishes.

    Every file the package writes goes through here, so a crash or kill mid-write never leaves a
    corrupt or half-written `path`. The temporary name is unpredictable and created exclusively
    (never through a link planted at that name), the data is flushed to the disk before the rename,
    the temporary file is removed on any error, and temporary files of `path` that a killed writer
    left behind are removed by the next write of `path` on the same machine. A full disk is an OutputFileError naming
    `path`; the previous `path` is kept.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(path.parent, glob.escape(path.name))
        # ".NAME.HOST.PID.RANDOM.tmp": O_EXCL, so never a file or link that is already there.
        prefix = f".{path.name}.{temp_name_host()}.{os.getpid()}."
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise _write_error(path, err) from None
    os.close(fd)
    tmp = Path(name)
    try:
        os.chmod(tmp, _FILE_MODE)
        yield tmp
    except BaseException as err:
        disk_full = isinstance(err, Exception) and not isinstance(err, ElmoError) and _is_disk_full(err, path.parent)
        tmp.unlink(missing_ok=True)
        if disk_full:
            raise _write_error(path, err, True) from None
        raise
    try:
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as err:
        disk_full = _is_disk_full(err, path.parent)
        tmp.unlink(missing_ok=True)
        raise _write_error(path, err, disk_full) from None
    _sync_folder(path.parent)


class _ErrorKeepingFile:
    """A binary file whose write errors are kept: torch.save turns a failed write (ENOSPC) into its own
    "unexpected pos" error, losing why it failed."""

    def __init__(self, file: BinaryIO) -> None:
        self.file = file
        self.error: Optional[OSError] = None

    def write(self, data: bytes) -> int:
        try:
            return self.file.write(data)
        except OSError as err:
            self.error = err
            raise

    def flush(self) -> None:
        self.file.flush()


@contextlib.contextmanager
def atomic_stream(path: Union[str, Path]) -> Iterator[Any]:
    """`atomic_output` opened as a binary file (write and flush), for writers that take a file
    object; a write error such as a full disk is reported as such whatever the writer made of it."""
    with atomic_output(path) as tmp, open(tmp, "wb") as f:
        sink = _ErrorKeepingFile(f)
        try:
            yield sink
        except Exception:
            if sink.error is not None:
                raise sink.error from None
            raise


def check_room(path: Union[str, Path], needed: int) -> None:
    """A DiskFullError naming `path` when the disk that will hold it has fewer than `needed` bytes free:
    found before writing, not after filling the disk."""
    folder = Path(path).absolute().parent
    while not folder.exists():
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise DiskFullError(
            f"cannot write {path}: it needs {needed / 2**20:.1f} MiB, the disk holding {folder} has "
            f"{free / 2**20:.1f} MiB free; free some space or write to another disk"
        )


def check_writable_folder(folder: Union[str, Path], what: str = "output folder") -> None:
    """An OutputFileError naming `folder` when files cannot be made in it, or it cannot be created (a
    read-only disk, no permission): found before any work starts, not at the first write after hours.
    Writes nothing: a missing folder is judged by the nearest folder above it that exists."""
    folder = Path(folder)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputFileError(f"cannot write in {what} {folder}: {existing} is a file; choose another folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        reason = "read-only file system" if os.statvfs(existing).f_flag & os.ST_RDONLY else "permission denied"
        where = "" if existing == folder else f" (to be made in {existing})"
        raise OutputFileError(f"cannot write in {what} {folder}{where}: {reason}; choose a folder you can write to")


def _write_error(path: Path, err: BaseException, disk_full: bool = False) -> OutputFileError:
    if disk_full:
        return DiskFullError(
            f"cannot write {path}: no space left on the device; free some space (the previous "
            f"{path.name}, if any, is unchanged) and run the command again"
        )
    reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
    return OutputFileError(f"cannot write {path}: {reason}")


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def count_lines(path: Union[str, Path]) -> int:
    """Number of lines, counted on raw bytes (fast; used for progress bars)."""
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def file_sha256(path: Union[str, Path], what: str = "file") -> str:
    """The sha256 of the file at `path`."""
    return file_digests([path], ("sha256",), what)["sha256"]


def file_digests(
    paths: Sequence[Union[str, Path]], algorithms: Sequence[str], what: str = "file", copy_to: Optional[BinaryIO] = None
) -> Dict[str, str]:
    """hashlib's digests `algorithms` (e.g. sha256 and a publisher's sha1) of the files at `paths` read one
    after the other, as one stream (an archive's parts), in blocks of 1 MiB (models and corpora do not
    fit in memory); each block is also written to `copy_to` if given, so joining and hashing take one read.
    A file that cannot be read is an InputFileError naming it; a failed write to `copy_to` is its OSError."""
    digests = {name: hashlib.new(name) for name in algorithms}
    for path in paths:
        for block in _blocks(path, what):
            if copy_to is not None:
                copy_to.write(block)  # a failed write is the copy's, not `path`'s: the caller names the copy
            for digest in digests.values():
                digest.update(block)
    return {name: digest.hexdigest() for name, digest in digests.items()}


def _blocks(path: Union[str, Path], what: str) -> Iterator[bytes]:
    """The file's bytes in blocks of 1 MiB; an InputFileError naming it if it cannot be read."""
    try:
        with open(path, "rb") as f:
            while True:
                block = f.read(1 << 20)
                if not block:
                    return
                yield block
    except OSError as err:
        raise InputFileError(f"{what} {path} cannot be read: {err.strerror}") from None


def check_input_file(path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError) -> Path:
    """`path` as a Path if it names an existing regular file; else `error` (an InputFileError) saying why."""
    if str(path).strip() in ("", "."):
        raise error(f"no {what} file given (the path is empty)")
    path = Path(path)
    if not path.exists():
        raise error(f"{what} file {path} does not exist")
    if path.is_dir():
        raise error(f"{what} file {path} is a directory; give the file inside it")
    return path


def _not_utf8(path: Path, what: str, err: UnicodeDecodeError, error: Type[InputFileError], line: int) -> InputFileError:
    return error(
        f"{what} file {path} is not UTF-8 text ({err.reason} at line {line}); is it the right "
        "file? Convert text to UTF-8 first (e.g. iconv -t utf-8)"
    )


def _lines_before(err: UnicodeDecodeError) -> int:
    """How many lines end before the bad byte of `err`, counting every line break universal newlines
    count (a lone \\r too); the bytes are the error's own (utf-8-sig's leave the byte-order mark out)."""
    head = bytes(err.object[: err.start])
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n")


def read_text(path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError) -> str:
    """The whole file as UTF-8 text, without the byte-order mark some editors put first."""
    path = check_input_file(path, what, error)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise error(f"{what} file {path} cannot be read: {err.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise _not_utf8(path, what, err, error, _lines_before(err) + 1) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


# What json.loads raises for text it cannot turn into a value: JSONDecodeError (a ValueError), a
# ValueError for an integer of more than 4,300 digits, a RecursionError for arrays nested thousands deep.
JSON_ERRORS = (ValueError, RecursionError)


def read_json(path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError) -> Any:
    """The file's JSON value; `error` naming the file for text that is no JSON json can hold."""
    text = read_text(path, what, error)
    try:
        return json.loads(text)
    except JSON_ERRORS as err:
        problem = "arrays or objects nested too deeply" if isinstance(err, RecursionError) else str(err)
        raise error(f"{what} file {path} is not valid JSON: {problem}") from None


def text_lines(path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError) -> Iterator[str]:
    """The file's lines as UTF-8 text, streamed, without a leading byte-order mark; a bad byte is an
    InputFileError naming its true line. Each line is decoded by itself: a text file object decodes
    8 KB at a time before splitting lines, so its error comes lines early, before the lines that
    precede the bad byte are read."""
    path = check_input_file(path, what, error)
    lines_read = 0
    encoding = "utf-8-sig"
    try:
        with open(path, "rb") as f:
            for raw in f:
                try:
                    text = raw.decode(encoding)
                except UnicodeDecodeError as err:
                    raise _not_utf8(path, what, err, error, lines_read + _lines_before(err) + 1) from None
                encoding = "utf-8"
                # A lone \r ends a line too, as in a text file object (universal newlines).
                lines = StringIO(text, newline=None) if "\r" in text else (text,) if text else ()
                for line in lines:
                    yield line
                    lines_read += 1
    except OSError as err:
        raise error(f"{what} file {path} cannot be read: {err.strerror}") from None


# What h5py raises for a file whose metadata (superblock, object headers, B-trees) is damaged: it turns
# HDF5's errors into RuntimeError ("bad object header version number"), KeyError, OSError or ValueError,
# and one inside its link visitor's callback into SystemError.
HDF5_DAMAGE = (OSError, RuntimeError, KeyError, ValueError, TypeError, SystemError)


def open_hdf5(
    path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError, mode: str = "r"
) -> h5py.File:
    """An HDF5 file, or an InputFileError for a missing, truncated or non-HDF5 file; read, one whose data
    is not all inside it (`hdf5.check_self_contained`)."""
    if mode == "r":
        path = check_input_file(path, what, error)
    try:
        f = h5py.File(path, mode)
    except OSError as err:
        raise error(f"{what} file {path} is not a readable HDF5 file (truncated or another format?): {err}") from None
    if mode == "r":
        try:
            check_self_contained(f, path, what, error)
        except InputFileError:
            f.close()
            raise
        except HDF5_DAMAGE as err:
            f.close()
            raise error(
                f"{what} file {path} is damaged: HDF5 cannot read its structure ({type(err).__name__}: {err}); "
                "fetch or copy the model again"
            ) from None
    return f
