"""Unpacking a downloaded zip so that nothing can land outside the target directory."""

from __future__ import annotations

import errno
import shutil
import stat
import zipfile
from pathlib import Path, PurePosixPath

from .errors import DiskFullError, DownloadError, UnsafeArchiveError


def unpack_zip(archive: Path, into: Path) -> None:
    """Every entry of `archive` under `into`. Refused before anything is written: absolute paths, drive
    letters, `..` parts and symbolic links (a link could point anywhere once followed)."""
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as err:
        raise DownloadError(
            f"{archive} is not a readable zip archive ({err}); delete it and run the same command again"
        ) from None
    with zf:
        members = [(info, _safe_parts(info, archive)) for info in zf.infolist()]
        needed = sum(info.file_size for info in zf.infolist())
        free = shutil.disk_usage(into).free
        if needed > free:
            raise DiskFullError(
                f"unpacking {archive} needs {needed / 1e6:.0f} MB but the disk holding {into} has "
                f"{free / 1e6:.0f} MB free; free some space or use another --cache-dir / SPACY_ELMO_CACHE"
            )
        for info, parts in members:
            target = into.joinpath(*parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(info) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except OSError as err:
                if err.errno == errno.ENOSPC:
                    raise DiskFullError(
                        f"the disk holding {into} filled up while unpacking {archive}; free some space or "
                        "use another --cache-dir / SPACY_ELMO_CACHE, then run the same command again"
                    ) from None
                raise DownloadError(f"cannot unpack {info.filename} from {archive}: {err}") from None
            except zipfile.BadZipFile as err:
                raise DownloadError(f"{archive} is damaged ({err}); delete it and run the same command again") from None


def _safe_parts(info: zipfile.ZipInfo, archive: Path) -> tuple:
    name = info.filename.replace("\\", "/")
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise UnsafeArchiveError(
            f"{archive} holds a symbolic link ({info.filename}); refused, nothing was unpacked. The file is not "
            "the published archive: delete it and fetch it again from the publisher"
        )
    path = PurePosixPath(name)
    parts = tuple(p for p in path.parts if p not in ("", "."))
    if path.is_absolute() or (parts and parts[0].endswith(":")) or ".." in parts or not parts:
        raise UnsafeArchiveError(
            f"{archive} holds an entry outside its folder ({info.filename!r}); refused, nothing was unpacked. "
            "The file is not the published archive: delete it and fetch it again from the publisher"
        )
    return parts
