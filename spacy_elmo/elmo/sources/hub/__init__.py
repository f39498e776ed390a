"""Published ELMo models: the catalogue, the cache and the download (`python -m spacy_elmo models` /
`download NAME`). Nothing here runs implicitly: a model is fetched only by the download command or
`download_model`, and loading a catalogue name that is not in the cache fails with that command.
`download_model` is imported on first use, so that the catalogue and the cache load no download code.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ...util.lazy import lazy_names
from .cache_layout import CACHE_ENV, MIRROR_ENV, cache_dir, is_downloaded, model_dir
from .cache_layout import cache_dir as cache_dir_of
from .catalogue import Catalogue, ModelEntry, ModelFile, load_catalogue
from .errors import (
    DiskFullError,
    DownloadError,
    InputFileError,
    ModelNotDownloadedError,
    ModelReferenceError,
    NetworkError,
    RemoteFileError,
)

if TYPE_CHECKING:
    from .download import download_model as download_model


def is_catalogue_name(name: str, *, catalogue: Optional[Catalogue] = None) -> bool:
    """Whether `name` is a model of the catalogue (as opposed to a path)."""
    return name in (catalogue or load_catalogue()).names()


def downloaded_model_dir(name: str, cache_dir: Optional[Path] = None, *, catalogue: Optional[Catalogue] = None) -> Path:
    """The directory holding catalogue model `name`, unpacked; ModelNotDownloadedError, with the exact
    download command, if it is not in the cache (nothing is fetched here)."""
    (catalogue or load_catalogue()).get(name)  # ModelReferenceError for a name that is not in it
    root = cache_dir_of(cache_dir)
    if is_downloaded(name, root):
        return model_dir(name, root)
    option = f" --cache-dir {shlex.quote(str(root))}" if cache_dir is not None else ""
    raise ModelNotDownloadedError(
        f"ELMo model {name!r} is not downloaded (looked in {model_dir(name, root)}). Nothing is downloaded "
        f"at run time; fetch it once with:  python -m spacy_elmo download {name}{option}"
    )


__getattr__, __dir__, _lazy_all = lazy_names(__name__, {".download": ["download_model"]})

__all__ = [
    *_lazy_all,
    "CACHE_ENV",
    "MIRROR_ENV",
    "Catalogue",
    "InputFileError",
    "RemoteFileError",
    "DiskFullError",
    "DownloadError",
    "ModelEntry",
    "ModelFile",
    "ModelNotDownloadedError",
    "NetworkError",
    "ModelReferenceError",
    "cache_dir",
    "downloaded_model_dir",
    "is_catalogue_name",
    "load_catalogue",
]
