"""One URL to one file over HTTP(S): streamed, resumed with a Range request after a dropped connection,
with a progress bar. A resume sends If-Range with the validator (ETag, else Last-Modified) of the
response that began the `.part` (kept beside it in `<file>.part.validator`), so that bytes of a file
the server has replaced since are never appended; a `.part` without a validator is started again.

HTTP goes through requests (spaCy's own dependency) with urllib3's Retry: a busy or failing server
(429, 5xx) is asked again with exponential backoff, waiting as long as its Retry-After says, and given
up on after `STATUS_RETRIES` more tries with the last answer in the error; proxies come from the
environment as in every requests client. `file://` mirrors, which requests does not open, are read
with urllib."""

from __future__ import annotations

import contextlib
import errno
import http.client
import os
import shutil
from pathlib import Path
from typing import Any, BinaryIO, Mapping, Optional, Union
from urllib.error import URLError
from urllib.parse import urlsplit
from urllib.request import Request, urlopen

import requests
import urllib3
from requests.adapters import HTTPAdapter
from tqdm import tqdm
from urllib3.util.retry import Retry

from ...util.io import atomic_output
from .errors import DiskFullError, DownloadError, NetworkError, RemoteFileError

CHUNK_BYTES = 1 << 20
TIMEOUT_S = 60.0
# Answers that mean "not now": asked again, after Retry-After if the server sends one (429, 503), else
# after a backoff doubling from BACKOFF_S (none before the first retry: urllib3's schedule).
RETRY_STATUSES = (429, 500, 502, 503, 504)
STATUS_RETRIES = 5
BACKOFF_S = 1.0
# The longest wait a Retry-After may ask for: a server asking for an hour would hold `download` silent
# for that hour; past this it is waited for this long, and then the tries run out and the error says
# to run again later.
RETRY_AFTER_MAX_S = 120.0
Headers = Union[Mapping[str, str], http.client.HTTPMessage]


class _CappedRetry(Retry):
    """urllib3's Retry with Retry-After's wait capped at RETRY_AFTER_MAX_S."""

    def parse_retry_after(self, retry_after: str) -> float:
        return min(super().parse_retry_after(retry_after), RETRY_AFTER_MAX_S)


def _session() -> requests.Session:
    """A session whose HTTP(S) requests are retried on RETRY_STATUSES only: a refused connection or a
    timeout fails at once (NetworkError), and a body cut short is resumed by `fetch` itself."""
    retry = _CappedRetry(
        total=STATUS_RETRIES,
        connect=0,
        read=0,
        other=0,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=frozenset({"GET"}),
        backoff_factor=BACKOFF_S,
        respect_retry_after_header=True,
        raise_on_status=False,  # the last answer is returned, and named in the error
    )
    session = requests.Session()
    for scheme in ("http://", "https://"):
        session.mount(scheme, HTTPAdapter(max_retries=retry))
    return session


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
    times, then raises DownloadError with the partial file kept. `hint` ends every error message
    (where to put a file fetched by hand)."""
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _session() as session:
        _fetch(session, url, dest, part, expected_size, retries, hint, progress)


def _fetch(
    session: requests.Session,
    url: str,
    dest: Path,
    part: Path,
    expected_size: Optional[int],
    retries: int,
    hint: str,
    progress: bool,
) -> None:
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
        outcome = _transfer(session, url, part, offset, validator, expected_size, hint, progress)
        if outcome is None:
            _finish(part, dest)
            return
        resumes += 1
        if resumes > retries:
            have = part.stat().st_size if part.exists() else 0
            raise DownloadError(
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


def _keep_validator(part: Path, headers: Headers) -> None:
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
    session: requests.Session,
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
    if urlsplit(url).scheme == "file":
        response: Any = _open_file(url, headers, hint)
        status, response_headers, body = 200, response.headers, response
    else:
        try:
            response = session.get(url, headers=headers, stream=True, timeout=TIMEOUT_S)
        except requests.RequestException as err:
            raise NetworkError(
                f"cannot reach {_host(url)} to fetch {url} ({_reason(err)}). Check the network connection and proxy "
                f"settings (HTTPS_PROXY), or point at a mirror with --base-url or SPACY_ELMO_MIRROR.{hint}"
            ) from None
        status, response_headers, body = response.status_code, response.headers, response.raw
        if status >= 400:
            response.close()
            if status == 416 and offset:
                return _range_refused(response_headers, part, offset)
            _refuse(url, status, response.reason, hint)
    with contextlib.closing(response):
        if offset and status != 206:
            offset = 0  # the file changed (If-Range) or the server ignores Range: start again from byte 0
        elif offset and not response_headers.get("Content-Range", "").startswith(f"bytes {offset}-"):
            part.unlink()
            return f"the server resumed at another byte than {offset}"
        length = response_headers.get("Content-Length")
        total = offset + int(length) if length and length.isdigit() else expected_size
        if expected_size is not None and total is not None and total != expected_size:
            raise RemoteFileError(
                f"{url} announces {total} bytes, the catalogue says {expected_size}: it is not the published "
                f"file. If a mirror is set, refresh its copy.{hint}"
            )
        _check_room(part.parent, (total - offset) if total is not None else None, url, hint)
        if not offset:
            _keep_validator(part, response_headers)
        return _stream(body, part, offset, total, url, hint, progress)


def _open_file(url: str, headers: Mapping[str, str], hint: str) -> Any:
    """A file of a `file://` mirror, opened for reading (whole: Range means nothing there)."""
    try:
        return urlopen(Request(url, headers=dict(headers)), timeout=TIMEOUT_S)
    except (URLError, OSError) as err:
        raise RemoteFileError(
            f"the mirror directory has no {url} ({getattr(err, 'reason', err)}); a mirror holds each file at "
            f"<base>/<host>/<path>, the layout `wget -x URL` writes.{hint}"
        ) from None


def _refuse(url: str, status: int, reason: str, hint: str) -> None:
    if status in (404, 410):
        raise RemoteFileError(
            f"{url} answered HTTP {status} ({reason}): the server has no such file. If a mirror is set "
            "(--base-url or SPACY_ELMO_MIRROR) it lacks this file at that path; otherwise the publisher has "
            f"moved it.{hint}"
        )
    tries = (
        f" {STATUS_RETRIES + 1} times, waiting as it asked (Retry-After) or longer each time"
        if status in RETRY_STATUSES
        else ""
    )
    raise RemoteFileError(
        f"{url} answered HTTP {status} ({reason}){tries}; try again later, or use a mirror (--base-url or "
        f"SPACY_ELMO_MIRROR).{hint}"
    )


def _reason(err: requests.RequestException) -> str:
    """The innermost cause of a failed request (urllib3 wraps it in a retry error, requests in its own)."""
    cause: BaseException = err
    while isinstance(cause.args[0] if cause.args else None, BaseException):
        cause = cause.args[0]
    reason = getattr(cause, "reason", None)
    return str(reason if isinstance(reason, BaseException) else cause)


def _stream(
    response: Any,
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
            except (OSError, http.client.HTTPException, urllib3.exceptions.HTTPError) as err:
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


def _range_refused(headers: Headers, part: Path, offset: int) -> Optional[str]:
    """416 on a resume: the partial file is already whole if the server's size equals it; else start over."""
    content_range = headers.get("Content-Range", "")
    size = content_range.rpartition("/")[2]
    if size.isdigit() and int(size) == offset:
        return None
    part.unlink()
    return f"the server refused to resume at byte {offset}"


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


__all__ = ["fetch", "mirrored_url"]
