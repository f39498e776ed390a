"""Unpacking a downloaded archive into the model's staging folder, through the package's one archive
reader (spacy_elmo.elmo.formats.archive: checked members, bounded size); its errors become download errors
that say the file was deleted and the same command fetches it afresh."""

from __future__ import annotations

import errno
from pathlib import Path

from ...formats.archive import ArchiveError, extract
from .errors import DiskFullError, DownloadError

_AGAIN = "; it was deleted and nothing was installed. Run the same command again to fetch it afresh"


def unpack_archive(archive: Path, into: Path) -> None:
    """Every member of `archive` (zip or tar) under `into`; a damaged or unsafe archive is deleted."""
    try:
        extract(archive, into)
    except ArchiveError as err:
        archive.unlink(missing_ok=True)
        raise DownloadError(f"{err}{_AGAIN}") from None
    except DiskFullError:  # the declared sizes exceed the free space: its message names both
        raise
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFullError(
                f"the disk holding {into} has no room to unpack {archive} ({err.strerror}); free some space or "
                "use another --cache-dir / SPACY_ELMO_CACHE, then run the same command again"
            ) from None
        raise DownloadError(f"cannot unpack {archive} into {into}: {err}") from None
