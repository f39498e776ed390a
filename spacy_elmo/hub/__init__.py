"""Published ELMo models: the catalogue, the cache and the download (`python -m spacy_elmo models` /
`download NAME`). Nothing here runs implicitly: a model is fetched only by the download command or
`download_model`, and loading a catalogue name that is not in the cache fails with that command."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Optional

from .cache_layout import CACHE_ENV, MIRROR_ENV, cache_dir, is_downloaded, model_dir
from .cache_layout import cache_dir as cache_dir_of
from .catalogue import Catalogue, ModelEntry, ModelFile, load_catalogue
from .download import download_model
from .errors import (
    CatalogueError,
    ChecksumError,
    DiskFullError,
    DownloadError,
    DownloadInterrupted,
    FetchByHandError,
    ModelNotDownloadedError,
    NetworkError,
    RemoteFileError,
    UnknownModelError,
    UnsafeArchiveError,
)


def is_catalogue_name(name: str, *, catalogue: Optional[Catalogue] = None) -> bool:
    """Whether `name` is a model of the catalogue (as opposed to a path)."""
    return name in (catalogue or load_catalogue()).names()


def downloaded_model_dir(name: str, cache_dir: Optional[Path] = None, *, catalogue: Optional[Catalogue] = None) -> Path:
    """The directory holding catalogue model `name`, unpacked; ModelNotDownloadedError, with the exact
    download command, if it is not in the cache (nothing is fetched here)."""
    (catalogue or load_catalogue()).get(name)  # UnknownModelError for a name that is not in it
    root = cache_dir_of(cache_dir)
    if is_downloaded(name, root):
        return model_dir(name, root)
    option = f" --cache-dir {shlex.quote(str(root))}" if cache_dir is not None else ""
    raise ModelNotDownloadedError(
        f"ELMo model {name!r} is not downloaded (looked in {model_dir(name, root)}). Nothing is downloaded "
        f"at run time; fetch it once with:  python -m spacy_elmo download {name}{option}"
    )


__all__ = [
    "CACHE_ENV",
    "MIRROR_ENV",
    "Catalogue",
    "CatalogueError",
    "ChecksumError",
    "DiskFullError",
    "DownloadError",
    "DownloadInterrupted",
    "FetchByHandError",
    "ModelEntry",
    "ModelFile",
    "ModelNotDownloadedError",
    "NetworkError",
    "RemoteFileError",
    "UnknownModelError",
    "UnsafeArchiveError",
    "cache_dir",
    "download_model",
    "downloaded_model_dir",
    "is_catalogue_name",
    "load_catalogue",
]
