"""`download NAME`: fetch a catalogue model's files, verify them (checksums where the catalogue states
them, and always that each file is what it claims, file_checks.py), unpack, and only then give the model
its final directory in the cache (swap.py), so that a model directory is always complete.

Downloaded files stay in the staging folder until the model is in place (they are hard-linked or
copied into it), so a run killed at any point leaves complete files that the next run uses instead of
fetching them again; that run also recovers or removes what the killed one left (swap.recover), and
removes staging copies of files the installed model holds.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict, List, Optional, Union, cast

from filelock import FileLock

from ...errors import ElmoError
from ...util.io import atomic_output, file_digests, file_sha256
from .cache_layout import RECORD_NAME, cache_dir, is_downloaded, lock_path, mirror_base, model_dir, staging_dir
from .catalogue import Catalogue, JoinedArchive, ModelEntry, ModelFile, load_catalogue
from .errors import DownloadError, NetworkError, RemoteFileError
from .fetch import fetch, mirrored_url
from .file_checks import file_problem, model_problem
from .record import is_complete, recorded_sha256s, write_record
from .swap import install, leftovers, recover, temp_dir
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
    staging = staging_dir(name, root)
    if is_downloaded(name, root) and not force and not leftovers(final) and not staging.exists():
        return final
    try:
        staging.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DownloadError(
            f"cannot create the cache directory {staging} ({err.strerror}); choose another with --cache-dir "
            "or SPACY_ELMO_CACHE"
        ) from None
    with FileLock(str(lock_path(name, root))):
        recover(final, is_complete)
        if is_downloaded(name, root) and not force:
            _remove_installed_copies(entry, staging, final)
            return final  # installed already, or by another process while this one waited
        if final.exists() and not force:
            raise DownloadError(
                f"{final} exists but was not made by `download` (it has no {RECORD_NAME}); move it away, or "
                f"pass --force to replace it. A file fetched by hand goes in {staging} instead."
            )
        _refuse_missing_by_hand(entry, staging)
        base = mirror_base(base_url)
        fetched = [_fetch_verified(entry, f, staging, base, retries, progress) for f in entry.files]
        _assemble(entry, staging, final, fetched)
        _remove_installed_copies(entry, staging, final)
    return final


def _hint(entry: ModelEntry, file: ModelFile, dest: Path) -> str:
    where = " or ".join(file.sources) or f"the file from {file.by_hand}"
    return (
        f" To fetch it by hand, download {where} (source: {entry.source}), put it at {dest} and run the "
        "same command again: it is verified and installed without the network."
    )


def _refuse_missing_by_hand(entry: ModelEntry, staging: Path) -> None:
    """Before anything is fetched: the files a person must fetch, where from and where to put them."""
    missing = [f for f in entry.files if f.by_hand and not (staging / f.file_name).exists()]
    if not missing:
        return
    steps = "; ".join(f"{f.by_hand} -> {staging / f.file_name}" for f in missing)
    raise DownloadError(
        f"{entry.name} is published where no script can fetch it (source: {entry.source}). Open each page in a "
        f"browser, download its file and save it under the name shown: {steps}. Then run the same command "
        "again: the files are verified and installed without the network."
    )


def _fetch_verified(
    entry: ModelEntry, file: ModelFile, staging: Path, base: Optional[str], retries: int, progress: bool
) -> Dict[str, object]:
    """The file in staging, verified: fetched from its first source that serves the published bytes (a
    source that cannot be reached, answers an error or serves other bytes gives way to the next), or
    the copy already there (an earlier run's, or one fetched by hand)."""
    dest = staging / file.file_name
    urls = [mirrored_url(source, base) for source in file.sources]
    hint = _hint(entry, file, dest)
    if dest.exists() or not urls:
        return _verified(entry, file, dest, urls[0] if urls else str(dest), hint)
    failures: List[DownloadError] = []
    for n, url in enumerate(urls, 1):
        try:  # the fetch-by-hand hint with the last source's error only
            return _fetch_one(entry, file, dest, url, hint if n == len(urls) else "", retries, progress)
        except (NetworkError, RemoteFileError) as err:
            failures.append(err)
    if len(failures) == 1:
        raise failures[0]
    tried = " ".join(f"({n}) {failure}" for n, failure in enumerate(failures, 1))
    raise type(failures[-1])(f"no source of {file.file_name} served it, tried in order: {tried}") from None


def _fetch_one(
    entry: ModelEntry, file: ModelFile, dest: Path, url: str, hint: str, retries: int, progress: bool
) -> Dict[str, object]:
    fetch(url, dest, expected_size=file.size, retries=retries, hint=hint, progress=progress)
    return _verified(entry, file, dest, url, hint)


def _verified(entry: ModelEntry, file: ModelFile, dest: Path, url: str, hint: str) -> Dict[str, object]:
    """The download record of `dest` (from `url`) if it is the published file; else it is deleted and
    RemoteFileError says why."""
    size = dest.stat().st_size
    digests = file_digests([dest], ("sha256", "sha1") if file.sha1 else ("sha256",), "downloaded file")
    sha256 = digests["sha256"]
    problem = None
    if file.size is not None and size != file.size:
        problem = f"{size} bytes where the catalogue says {file.size}"
    else:
        problem = _digest_problem(digests, file.sha256, file.sha1)
    if problem:
        dest.unlink()
        raise RemoteFileError(
            f"{file.file_name} from {url} has {problem}: it is not the published file, so it was deleted "
            f"and nothing was installed. Run the same command again to fetch it afresh; if it fails again, "
            f"the server (or mirror) holds another file.{hint}"
        )
    if not file.archive and entry.joined_archive is None:  # archives and their parts: checked when unpacked
        _refuse_if(file_problem(dest, file.save_as or file.file_name), dest, url, hint)
    return {
        "url": file.url,
        "fetched_from": url,
        "file_name": file.file_name,
        "size": size,
        "sha256": sha256,
        "size_in_catalogue": file.size,
        "sha256_in_catalogue": file.sha256,
    }


def _digest_problem(digests: Dict[str, str], sha256: Optional[str], sha1: Optional[str]) -> Optional[str]:
    """What differs from the stated digests (None: all stated ones match)."""
    for name, stated in (("sha256", sha256), ("sha1", sha1)):
        if stated is not None and digests[name] != stated:
            return f"{name} {digests[name]} where the catalogue says {stated}"
    return None


def _refuse_if(problem: str, dest: Path, url: str, hint: str) -> None:
    if not problem:
        return
    dest.unlink(missing_ok=True)
    raise RemoteFileError(
        f"{dest.name} from {url} {problem}: the server (or mirror) answered with something else than the "
        f"published file, so it was deleted and nothing was installed. Run the same command again to fetch it "
        f"afresh; if it fails again, fetch it by hand.{hint}"
    )


def _assemble(entry: ModelEntry, staging: Path, final: Path, fetched: List[Dict[str, object]]) -> None:
    """Build the model in a temporary directory beside `final`, check it, write the record, swap."""
    tmp = temp_dir(final)
    tmp.mkdir(parents=True)
    try:
        _place_files(entry, staging, tmp)
        problem = model_problem(tmp)
        if problem:
            _delete_downloads(entry, staging)
            origins = ", ".join(f.url or str(f.by_hand) for f in entry.files)
            raise RemoteFileError(
                f"the files of {entry.name} from {origins} do not make a model "
                f"({problem}): the server (or mirror) holds other files. They were deleted and nothing was "
                "installed; run the same command again to fetch them afresh"
            )
        write_record(tmp, entry, fetched)
        install(tmp, final)
    except ElmoError:  # already names the file and the fix (a full disk, a checksum)
        raise
    except OSError as err:
        raise DownloadError(f"cannot install {entry.name} into {final}: {err}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _place_files(entry: ModelEntry, staging: Path, tmp: Path) -> None:
    """The model's files in `tmp`: an archive (whole, or joined from its parts) unpacked, else each file
    linked under its name."""
    if entry.joined_archive is not None:
        archive = _join_parts(entry, staging)
        try:
            unpack_archive(archive, tmp)
        except DownloadError:
            _delete_downloads(entry, staging)  # the parts made a damaged archive: fetch them afresh
            raise
        finally:
            archive.unlink(missing_ok=True)
        _flatten(tmp)
        return
    for file in entry.files:
        if file.archive:
            unpack_archive(staging / file.file_name, tmp)
            _flatten(tmp)
        else:
            _link_or_copy(staging / file.file_name, tmp / (file.save_as or file.file_name))


def _join_parts(entry: ModelEntry, staging: Path) -> Path:
    """The archive `entry.joined_archive` made from its parts in order (in staging, written atomically),
    checked against the digests its publisher states."""
    joined = cast(JoinedArchive, entry.joined_archive)
    archive = staging / joined.name
    parts = [staging / file.file_name for file in entry.files]
    try:
        with atomic_output(archive) as tmp, open(tmp, "wb") as out:
            digests = file_digests(parts, ("sha256", "sha1"), "downloaded part", copy_to=out)
    except ElmoError:  # a full disk (atomic_output's DiskFullError), an unreadable part
        raise
    except OSError as err:  # the write of the joined archive
        raise DownloadError(
            f"cannot write {archive}, the archive joined from the parts of {entry.name} ({err.strerror or err}); "
            f"the parts are kept. Make room for it in {staging} (or use another --cache-dir / SPACY_ELMO_CACHE) "
            "and run the same command again"
        ) from None
    problem = _digest_problem(digests, joined.sha256, joined.sha1)
    if problem:
        archive.unlink()
        _delete_downloads(entry, staging)
        raise RemoteFileError(
            f"the parts of {entry.name} ({', '.join(f.file_name for f in entry.files)}) joined give {joined.name} "
            f"with {problem}: a part is not the published one. They were deleted and nothing was installed; run "
            "the same command again to fetch them afresh"
        )
    return archive


def _delete_downloads(entry: ModelEntry, staging: Path) -> None:
    for file in entry.files:
        (staging / file.file_name).unlink(missing_ok=True)


def _flatten(folder: Path) -> None:
    """An archive that wraps the model in one folder: move that folder's files up, so that the model
    directory is always `folder` itself."""
    children = list(folder.iterdir())
    if len(children) != 1 or not children[0].is_dir():
        return
    inner = children[0]
    aside = folder / (inner.name + "~")
    while (inner / aside.name).exists():
        aside = folder / (aside.name + "~")
    inner.rename(aside)
    for child in aside.iterdir():
        child.rename(folder / child.name)
    aside.rmdir()


def _link_or_copy(src: Path, dest: Path) -> None:
    """`dest` as a hard link to `src` (no copy of a large file), or a copy where links are not possible."""
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def _remove_installed_copies(entry: ModelEntry, staging: Path, final: Path) -> None:
    """Delete the staging copies of files the installed model holds (by sha256); keep other files and
    `.part` files, which a later `--force` resumes. The staging folder goes once empty."""
    recorded = recorded_sha256s(final)
    for file in entry.files:
        copy = staging / file.file_name
        if copy.is_file() and file_sha256(copy, "downloaded file") in recorded:
            copy.unlink()
    try:
        staging.rmdir()
    except OSError:
        pass  # a hand-fetched file of another name, or a .part: leave it for the user
