"""Reading a model from a zip archive without trusting it: every member is checked before anything is
written, and the archive is unpacked into a temporary directory that is removed after loading.

A member whose name is absolute, climbs out with `..`, uses backslashes or a drive letter, or is a
symbolic link is refused with the archive and the member named: such an archive is either broken or
made to write outside the directory it is unpacked into.
"""

from __future__ import annotations

import contextlib
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator, List, Optional, Union

from ..errors import InputFileError


class ArchiveError(InputFileError):
    """A model archive that is not a readable zip file or holds a member that could escape."""


def _unsafe_reason(info: zipfile.ZipInfo) -> str:
    """Why a member must not be unpacked, or '' when it is safe."""
    name = info.filename
    if "\\" in name or (len(name) > 1 and name[1] == ":"):
        return "uses backslashes or a drive letter"
    path = PurePosixPath(name)
    if path.is_absolute():
        return "is an absolute path"
    if ".." in path.parts:
        return "climbs out of the archive with '..'"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "is a symbolic link"
    return ""


def member_names(archive: Union[str, Path]) -> List[str]:
    """The names of the archive's files (no directories), every member checked (see the module
    docstring)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError) as err:
        raise ArchiveError(f"model archive {archive} is not a readable zip file ({err}); download it again") from None
    for info in infos:
        reason = _unsafe_reason(info)
        if reason:
            raise ArchiveError(
                f"model archive {archive}: member {info.filename!r} {reason}; refusing to unpack it. "
                "Get the archive from its original source again"
            )
    return [info.filename for info in infos if not info.is_dir()]


@contextlib.contextmanager
def unpacked(archive: Union[str, Path], only: Optional[Callable[[str], bool]] = None) -> Iterator[Path]:
    """The archive (or the members whose names pass `only`) unpacked into a temporary directory,
    removed when the block ends."""
    names = member_names(archive)
    with tempfile.TemporaryDirectory(prefix="spacy-elmo-") as directory:
        try:
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(directory, [n for n in names if only is None or only(n)])
        except (zipfile.BadZipFile, OSError) as err:
            raise ArchiveError(f"model archive {archive} cannot be unpacked ({err}); download it again") from None
        yield Path(directory)
