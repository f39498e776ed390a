"""One URL to one file over HTTP(S): streamed, resumed with a Range request after a dropped connection,
with a progress bar. A resume sends If-Range with the validator (ETag, else Last-Modified) of the
response that began the `.part` (kept beside it in `<file>.part.validator`), so that bytes of a file
the server has replaced since are never appended; a `.part` without a validator is started again.
Uses urllib: a Range header and a streamed read are all this needs, and the
standard library keeps the download path free of a dependency spaCy might drop (docs/design.md)."""

from __future__ import annotations

import errno
import http.client
import os
import shutil
from pathlib import Path
from typing import BinaryIO, Optional
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import Request, urlopen

from tqdm import tqdm

from ..util.io import atomic_output
from .errors import DiskFullError, DownloadError, DownloadInterrupted, NetworkError, RemoteFileError

CHUNK_BYTES = 1 << 20
TIMEOUT_S = 60.0


def mirrored_url(url: str, base: Optional[str]) -> str:
    """`url` itself, or its place on a mirror: `<base>/<host>/<path>`, the layout `wget -x URL` writes."""
    if not base:
        return url
    parts = urlsplit(url)
    return f"{base}/{parts.netloc}{parts.path}"


def fetch(
    url: str,
    dest: Path,
    *,
    expected_size: Optional[int] = None,
    retries: int = 3,
    hint: str = "",
    progress: bool = True,
) -> None:
    """Download `url` to `dest` through `dest.part`; `dest` appears only once the server's bytes are all
    there. A `.part` left by an earlier run is resumed. A dropped connection is resumed up to `retries`
    times, then raises DownloadInterrupted with the partial file kept. `hint` ends every error message
    (where to put a file fetched by hand)."""
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    resumes = 0
    while True:
        offset = part.stat().st_size if part.exists() else 0
        if expected_size is not None and offset >= expected_size:
            if offset == expected_size:
                _finish(part, dest)
                return
            part.unlink()
            offset = 0
        validator = _read_validator(part) if offset else None
        if offset and validator is None:
            part.unlink()  # nothing tells whether the remote file is still the one it was begun from
            offset = 0
        outcome = _transfer(url, part, offset, validator, expected_size, hint, progress)
        if outcome is None:
            _finish(part, dest)
            return
        resumes += 1
        if resumes > retries:
            have = part.stat().st_size if part.exists() else 0
            raise DownloadInterrupted(
                f"the connection to {_host(url)} dropped while fetching {url} ({outcome}); {have} bytes are "
                f"kept in {part}. Run the same command again to resume from there.{hint}"
            )


def _validator_path(part: Path) -> Path:
    return part.with_name(part.name + ".validator")


def _read_validator(part: Path) -> Optional[str]:
    try:
        return _validator_path(part).read_text(encoding="utf8").strip() or None
    except OSError:
        return None


def _keep_validator(part: Path, headers: http.client.HTTPMessage) -> None:
    """Remember what identifies the remote file the `.part` is begun from (a weak ETag cannot)."""
    etag = headers.get("ETag", "")
    validator = etag if etag and not etag.startswith("W/") else headers.get("Last-Modified", "")
    if not validator:
        _validator_path(part).unlink(missing_ok=True)
        return
    with atomic_output(_validator_path(part)) as tmp:
        tmp.write_text(validator + "\n", encoding="utf8")


def _finish(part: Path, dest: Path) -> None:
    os.replace(part, dest)
    _validator_path(part).unlink(missing_ok=True)


def _transfer(
    url: str,
    part: Path,
    offset: int,
    validator: Optional[str],
    expected_size: Optional[int],
    hint: str,
    progress: bool,
) -> Optional[str]:
    """One request. None when the body arrived whole; else why it stopped (the caller resumes)."""
    headers = {"User-Agent": "spacy-elmo", "Accept-Encoding": "identity"}
    if offset and validator:
        headers["Range"] = f"bytes={offset}-"
        headers["If-Range"] = validator
    try:
        response = urlopen(Request(url, headers=headers), timeout=TIMEOUT_S)
    except HTTPError as err:
        if err.code == 416 and offset:
            return _range_refused(err, part, offset)
        if err.code in (404, 410):
            raise RemoteFileError(
                f"{url} answered HTTP {err.code} ({err.reason}): the server has no such file. If a mirror is set "
                "(--base-url or SPACY_ELMO_MIRROR) it lacks this file at that path; otherwise the publisher has "
                f"moved it.{hint}"
            ) from None
        raise RemoteFileError(
            f"{url} answered HTTP {err.code} ({err.reason}); try again later, or use a mirror (--base-url or "
            f"SPACY_ELMO_MIRROR).{hint}"
        ) from None
    except (URLError, OSError, http.client.HTTPException) as err:
        reason = getattr(err, "reason", err)
        if urlsplit(url).scheme == "file":
            raise RemoteFileError(
                f"the mirror directory has no {url} ({reason}); a mirror holds each file at <base>/<host>/<path>, "
                f"the layout `wget -x URL` writes.{hint}"
            ) from None
        raise NetworkError(
            f"cannot reach {_host(url)} to fetch {url} ({reason}). Check the network connection and proxy "
            f"settings (HTTPS_PROXY), or point at a mirror with --base-url or SPACY_ELMO_MIRROR.{hint}"
        ) from None
    with response:
        if offset and response.status != 206:
            offset = 0  # the file changed (If-Range) or the server ignores Range: start again from byte 0
        elif offset and not response.headers.get("Content-Range", "").startswith(f"bytes {offset}-"):
            part.unlink()
            return f"the server resumed at another byte than {offset}"
        length = response.headers.get("Content-Length")
        total = offset + int(length) if length and length.isdigit() else expected_size
        if expected_size is not None and total is not None and total != expected_size:
            raise RemoteFileError(
                f"{url} announces {total} bytes, the catalogue says {expected_size}: it is not the published "
                f"file. If a mirror is set, refresh its copy.{hint}"
            )
        _check_room(part.parent, (total - offset) if total is not None else None, url, hint)
        if not offset:
            _keep_validator(part, response.headers)
        return _stream(response, part, offset, total, url, hint, progress)


def _stream(
    response: http.client.HTTPResponse,
    part: Path,
    offset: int,
    total: Optional[int],
    url: str,
    hint: str,
    progress: bool,
) -> Optional[str]:
    label = Path(urlsplit(url).path).name
    with (
        open(part, "ab" if offset else "wb") as out,
        tqdm(total=total, initial=offset, unit="B", unit_scale=True, desc=label, disable=not progress) as bar,
    ):
        while True:
            try:
                chunk = response.read(CHUNK_BYTES)
            except (OSError, http.client.HTTPException) as err:
                return f"{type(err).__name__}: {err}"
            if not chunk:
                break
            _write(out, chunk, part, url, hint)
            bar.update(len(chunk))
    have = part.stat().st_size
    if total is not None and have < total:
        return f"the server closed the connection after {have} of {total} bytes"
    return None


def _write(out: BinaryIO, chunk: bytes, part: Path, url: str, hint: str) -> None:
    try:
        out.write(chunk)
    except OSError as err:
        if err.errno == errno.ENOSPC:
            raise DiskFullError(
                f"the disk holding {part.parent} is full while fetching {url}. Free some space and run the "
                f"same command again (it resumes), or download to another disk with --cache-dir or "
                f"SPACY_ELMO_CACHE.{hint}"
            ) from None
        raise DownloadError(f"cannot write {part} while fetching {url}: {err.strerror}.{hint}") from None


def _check_room(folder: Path, needed: Optional[int], url: str, hint: str) -> None:
    if needed is None:
        return
    free = shutil.disk_usage(folder).free
    if needed > free:
        raise DiskFullError(
            f"{url} needs {needed / 1e6:.0f} MB but the disk holding {folder} has {free / 1e6:.0f} MB free. "
            f"Free some space, or download to another disk with --cache-dir or SPACY_ELMO_CACHE.{hint}"
        )


def _range_refused(err: HTTPError, part: Path, offset: int) -> Optional[str]:
    """416 on a resume: the partial file is already whole if the server's size equals it; else start over."""
    content_range = err.headers.get("Content-Range", "") if err.headers else ""
    size = content_range.rpartition("/")[2]
    if size.isdigit() and int(size) == offset:
        return None
    part.unlink()
    return f"the server refused to resume at byte {offset}"


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


__all__ = ["fetch", "mirrored_url"]
