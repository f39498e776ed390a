"""The one archive reader, for `load_bilm(ARCHIVE)` and for `download`: zip, tar and compressed tar
(.tar.gz / .tgz as TF-Hub modules ship, .tar.bz2, .tar.xz), read without trusting the archive.

Every member is checked before anything is written: a name that is absolute, climbs out with `..`,
uses backslashes, a drive letter or a control character, and any member that is not a plain file or
folder (symbolic and hard links, devices) is refused with the archive and the member named; so is an
archive declaring more than MAX_MEMBERS members or MAX_TOTAL_BYTES bytes unpacked (a zip bomb would
fill the disk). A truncated archive or a damaged compressed stream is an ArchiveError naming the file,
never a raw zlib or tarfile error. `unsafe_name_reason` is the one check for every name that becomes a
path: archive members here, model and file names in the download cache (spacy_elmo.elmo.sources.hub). What macOS
adds to the archives it makes (`is_platform_metadata`) is checked like any member, then skipped, so
`load_bilm(ARCHIVE)` and `download` see the same files.
"""

from __future__ import annotations

import contextlib
import lzma
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Callable, Iterator, List, Optional, Union

from ..errors import DiskFullError
from .errors import ArchiveError

MAX_TOTAL_BYTES = 16 << 30  # the largest published ELMo model unpacks to under 1 GB
MAX_MEMBERS = 10_000
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")
# What a damaged or truncated archive raises from inside zipfile, tarfile and the decompressors.
_DAMAGED = (zipfile.BadZipFile, tarfile.TarError, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError)

PathLike = Union[str, Path]


@dataclass(frozen=True)
class _Member:
    name: str
    size: int
    is_dir: bool
    handle: Union[zipfile.ZipInfo, tarfile.TarInfo]


def unsafe_name_reason(name: str, *, single: bool = False) -> str:
    """Why `name` must not become a path under a folder ('' when it may): a relative path staying
    inside the folder, or with `single` one plain file or folder name (a model or file name)."""
    if any(ord(c) < 32 for c in name):
        return "holds a control character"
    if "\\" in name or (len(name) > 1 and name[1] == ":"):
        return "uses backslashes or a drive letter"
    path = PurePosixPath(name)
    if path.is_absolute():
        return "is an absolute path"
    if ".." in path.parts:
        return "climbs out of its folder with '..'"
    if not path.parts:
        return "names no file"
    if single and (len(path.parts) != 1 or "/" in name or name.startswith(".")):
        return "is not a plain file name"
    return ""


def is_platform_metadata(name: str) -> bool:
    """Whether a member or file is what macOS adds beside a model: its zip tool's `__MACOSX/` folder,
    AppleDouble `._NAME` files (tar on macOS) and Finder's `.DS_Store`. Never part of a model, and
    `._options.json` would pass for a second options file."""
    parts = PurePosixPath(name).parts
    return bool(parts) and (parts[0] == "__MACOSX" or parts[-1] == ".DS_Store" or parts[-1].startswith("._"))


def is_archive(path: PathLike) -> bool:
    """Whether `path` is a file that claims to be an archive (by its name or its first bytes), damaged
    or not: such a file is read as an archive and a damaged one is diagnosed as such."""
    path = Path(path)
    if not path.is_file():
        return False
    if path.name.lower().endswith(ARCHIVE_SUFFIXES):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return head.startswith(_MAGIC) or head[257:262] == b"ustar"


def _damaged(archive: PathLike, err: BaseException) -> ArchiveError:
    detail = str(err) or type(err).__name__
    return ArchiveError(
        f"model archive {archive} is damaged (truncated download?) or not a zip or tar archive ({detail}); "
        "get it from its source again"
    )


def _zip_members(zf: zipfile.ZipFile) -> Iterator[_Member]:
    for info in zf.infolist():
        if stat.S_ISLNK(info.external_attr >> 16):
            yield _Member(info.filename, -1, False, info)  # size -1: not a plain file
        else:
            yield _Member(info.filename, info.file_size, info.is_dir(), info)


def _tar_members(tf: tarfile.TarFile) -> Iterator[_Member]:
    # next() one by one, so that the bounds are checked before reading past a huge member.
    while True:
        info = tf.next()
        if info is None:
            return
        plain = info.isfile() or info.isdir()
        yield _Member(info.name, info.size if plain else -1, info.isdir(), info)


def _checked(archive: PathLike, members: Iterator[_Member]) -> List[_Member]:
    found: List[_Member] = []
    total = 0
    for member in members:
        reason = "is a link or a special file, not a plain file" if member.size < 0 else unsafe_name_reason(member.name)
        if reason:
            raise ArchiveError(
                f"model archive {archive}: member {member.name!r} {reason}; refusing to unpack it. "
                "The archive is not as published: get it from its source again"
            )
        total += member.size
        found.append(member)
        if len(found) > MAX_MEMBERS or total > MAX_TOTAL_BYTES:
            raise ArchiveError(
                f"model archive {archive} declares more than {MAX_MEMBERS} members or {MAX_TOTAL_BYTES >> 30} GiB "
                "unpacked, far beyond any ELMo model; refusing to unpack it (a damaged or hostile archive)"
            )
    return found


@contextlib.contextmanager
def _open(archive: PathLike) -> Iterator[Union[zipfile.ZipFile, tarfile.TarFile]]:
    try:
        opened: Union[zipfile.ZipFile, tarfile.TarFile]
        if zipfile.is_zipfile(archive):
            opened = zipfile.ZipFile(archive)
        else:
            opened = tarfile.open(archive, "r:*")
    except _DAMAGED as err:
        raise _damaged(archive, err) from None
    with opened:
        yield opened


def _members(archive: PathLike, opened: Union[zipfile.ZipFile, tarfile.TarFile]) -> List[_Member]:
    try:
        listed = _zip_members(opened) if isinstance(opened, zipfile.ZipFile) else _tar_members(opened)
        return [member for member in _checked(archive, listed) if not is_platform_metadata(member.name)]
    except ArchiveError:
        raise
    except _DAMAGED as err:
        raise _damaged(archive, err) from None


def member_names(archive: PathLike) -> List[str]:
    """The names of the archive's files (no folders), every member checked (see the module docstring)."""
    with _open(archive) as opened:
        return [m.name for m in _members(archive, opened) if not m.is_dir]


def _source(opened: Union[zipfile.ZipFile, tarfile.TarFile], member: _Member) -> IO[bytes]:
    if isinstance(opened, zipfile.ZipFile):
        assert isinstance(member.handle, zipfile.ZipInfo)
        return opened.open(member.handle)
    assert isinstance(member.handle, tarfile.TarInfo)
    source = opened.extractfile(member.handle)
    assert source is not None  # a plain file (checked)
    return source


def _copy(source: IO[bytes], target: Path, limit: int, archive: PathLike) -> int:
    """Copy at most `limit` bytes; more means the member lied about its size."""
    written = 0
    with source, open(target, "xb") as out:
        while True:
            block = source.read(1 << 20)
            if not block:
                return written
            written += len(block)
            if written > limit:
                raise ArchiveError(f"model archive {archive}: member {target.name} holds more bytes than it declares")
            out.write(block)


def extract(archive: PathLike, into: PathLike, only: Optional[Callable[[str], bool]] = None) -> None:
    """Unpack the archive (or the files whose names pass `only`) into the existing folder `into`,
    checked and bounded (see the module docstring). A problem of the disk (full, read-only) is an
    OSError (DiskFullError when the declared sizes exceed its free space); one of the archive an ArchiveError."""
    into = Path(into)
    with _open(archive) as opened:
        members = [m for m in _members(archive, opened) if only is None or m.is_dir or only(m.name)]
        needed = sum(m.size for m in members)
        free = shutil.disk_usage(into).free
        if needed > free:  # the disk's problem, not the archive's
            raise DiskFullError(
                f"unpacking {archive} needs {needed / 1e6:.0f} MB and {into} has {free / 1e6:.0f} MB free; free some "
                "space there (for load_bilm, or set TMPDIR to another disk)"
            )
        for member in members:
            target = into.joinpath(*PurePosixPath(member.name).parts)
            try:
                if member.is_dir:
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                _copy(_source(opened, member), target, member.size, archive)
            except (FileExistsError, IsADirectoryError, NotADirectoryError) as err:
                raise ArchiveError(f"model archive {archive}: member {member.name!r} is given twice ({err})") from None
            except OSError as err:
                if err.errno is None:  # gzip.BadGzipFile and kin: the stream, not the disk
                    raise _damaged(archive, err) from None
                raise  # the disk (full, read-only): the caller reports it
            except _DAMAGED as err:
                raise _damaged(archive, err) from None


@contextlib.contextmanager
def unpacked(archive: PathLike, only: Optional[Callable[[str], bool]] = None) -> Iterator[Path]:
    """The archive (or the files whose names pass `only`) unpacked into a temporary directory,
    removed when the block ends."""
    with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as directory:
        try:
            extract(archive, directory, only)
        except DiskFullError:  # names the space needed and the folder
            raise
        except OSError as err:
            raise ArchiveError(
                f"model archive {archive} cannot be unpacked into {directory} ({err.strerror}); free some space "
                "there or set TMPDIR to another disk"
            ) from None
        yield Path(directory)
