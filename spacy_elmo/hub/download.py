"""`download NAME`: fetch a catalogue model's files, verify them, unpack, and only then give the model
its final directory in the cache, so that a model directory is always complete."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List, Optional, Union

from filelock import FileLock

from .cache import RECORD_NAME, cache_dir, is_downloaded, mirror_base, model_dir, staging_dir
from .catalogue import Catalogue, ModelEntry, ModelFile, load_catalogue
from .errors import ChecksumError, DiskFullError, DownloadError
from .fetch import fetch, mirrored_url
from .unpack import unpack_archive


def download_model(
    name: str,
    *,
    cache: Union[str, Path, None] = None,
    base_url: Optional[str] = None,
    catalogue: Optional[Catalogue] = None,
    force: bool = False,
    retries: int = 3,
    progress: bool = True,
) -> Path:
    """The directory of catalogue model `name`, downloaded into the cache if it is not there yet (or
    again with `force`). `cache` and `base_url` default to $SPACY_ELMO_CACHE / $SPACY_ELMO_MIRROR."""
    entry = (catalogue or load_catalogue()).get(name)
    root = cache_dir(cache)
    final = model_dir(name, root)
    if is_downloaded(name, root) and not force:
        return final
    staging = staging_dir(name, root)
    try:
        staging.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DownloadError(
            f"cannot create the cache directory {staging} ({err.strerror}); choose another with --cache-dir "
            "or SPACY_ELMO_CACHE"
        ) from None
    with FileLock(str(staging.parent / f"{name}.lock")):
        if is_downloaded(name, root) and not force:
            return final  # another process finished it while this one waited
        if final.exists() and not force:
            raise DownloadError(
                f"{final} exists but was not made by `download` (it has no {RECORD_NAME}); move it away, or "
                f"pass --force to replace it. A file fetched by hand goes in {staging} instead."
            )
        base = mirror_base(base_url)
        seen = [_fetch_verified(entry, f, staging, base, retries, progress) for f in entry.files]
        _assemble(entry, staging, final, seen)
        _tidy(staging)
    return final


def _fetch_verified(
    entry: ModelEntry, file: ModelFile, staging: Path, base: Optional[str], retries: int, progress: bool
) -> Dict[str, object]:
    dest = staging / file.file_name
    url = mirrored_url(file.url, base)
    hint = (
        f" To fetch it by hand, download {file.url} (source: {entry.source}), put it at {dest} and run the "
        "same command again: it is verified and installed without the network."
    )
    if not dest.exists():
        fetch(url, dest, expected_size=file.size, retries=retries, hint=hint, progress=progress)
    size, sha256 = dest.stat().st_size, _sha256(dest)
    problem = None
    if file.size is not None and size != file.size:
        problem = f"{size} bytes where the catalogue says {file.size}"
    elif file.sha256 is not None and sha256 != file.sha256:
        problem = f"sha256 {sha256} where the catalogue says {file.sha256}"
    if problem:
        dest.unlink()
        raise ChecksumError(
            f"{file.file_name} from {url} has {problem}: it is not the published file, so it was deleted "
            f"and nothing was installed. Run the same command again to fetch it afresh; if it fails again, "
            f"the server (or mirror) holds another file.{hint}"
        )
    return {
        "url": file.url,
        "fetched_from": url,
        "file_name": file.file_name,
        "size": size,
        "sha256": sha256,
        "size_in_catalogue": file.size,
        "sha256_in_catalogue": file.sha256,
    }


def _assemble(entry: ModelEntry, staging: Path, final: Path, seen: List[Dict[str, object]]) -> None:
    """Build the model in a temporary directory beside `final`, write the record, then rename."""
    for stale in final.parent.glob(f".{final.name}.*.tmp"):  # left by a killed run; we hold the lock
        shutil.rmtree(stale, ignore_errors=True)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    tmp.mkdir(parents=True)
    try:
        archives = [f for f in entry.files if f.archive]
        for file in archives:
            unpack_archive(staging / file.file_name, tmp)
        model_root = _only_subdir(tmp) if archives else tmp
        _write_record(model_root / RECORD_NAME, entry, seen)
        for file in entry.files:
            if not file.archive:
                os.replace(staging / file.file_name, model_root / (file.save_as or file.file_name))
        _replace_dir(model_root, final)
    except OSError as err:
        raise DownloadError(f"cannot install {entry.name} into {final}: {err}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for file in entry.files:
        if file.archive:
            (staging / file.file_name).unlink()


def _only_subdir(folder: Path) -> Path:
    """An archive that wraps the model in one folder: the model is that folder."""
    children = list(folder.iterdir())
    if len(children) == 1 and children[0].is_dir():
        return children[0]
    return folder


def _replace_dir(src: Path, final: Path) -> None:
    old = final.with_name(f".{final.name}.{os.getpid()}.old")
    if final.exists():
        os.replace(final, old)
    os.replace(src, final)
    shutil.rmtree(old, ignore_errors=True)


def _write_record(path: Path, entry: ModelEntry, seen: List[Dict[str, object]]) -> None:
    record = {
        "name": entry.name,
        "format": entry.format,
        "language": entry.language,
        "source": entry.source,
        "downloaded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "files": seen,
    }
    try:
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")
    except OSError as err:
        if err.errno == errno.ENOSPC:
            raise DiskFullError(f"the disk holding {path.parent} is full; free some space and run again") from None
        raise


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tidy(staging: Path) -> None:
    try:
        staging.rmdir()
    except OSError:
        pass  # a hand-fetched file of another name, or a .part: leave it for the user
