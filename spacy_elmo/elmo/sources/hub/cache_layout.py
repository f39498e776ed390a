"""Where downloaded models live: one directory per model under the cache directory, and a staging
directory beside them for partial and hand-fetched files.

    <cache>/<name>/                      the model, present only once complete and verified
    <cache>/<name>/spacy_elmo_download.json   what was fetched: URLs, sizes, sha256
    <cache>/downloads/<name>/<file>.part a download in progress (resumed by the next run)
    <cache>/downloads/<name>/<file>      a complete file, fetched by us or put there by hand
    <cache>/downloads/.<name>.lock       serialises two downloads of one model

Every model and file name goes through `name_problem` (the package's one check for names that become
paths, spacy_elmo.elmo.formats.archive) before it is joined to the cache directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

import platformdirs

from ...formats.archive import unsafe_name_reason
from .errors import DownloadError

CACHE_ENV = "SPACY_ELMO_CACHE"
MIRROR_ENV = "SPACY_ELMO_MIRROR"
RECORD_NAME = "spacy_elmo_download.json"  # what `download` writes into each model it installs, last
RESERVED_NAMES = ("downloads",)  # the cache's own folders: a model of that name would replace them


def cache_dir(override: Union[str, Path, None] = None) -> Path:
    """`override` (--cache-dir), else $SPACY_ELMO_CACHE, else the platform's user cache directory."""
    if override is not None and str(override).strip():
        return Path(override).expanduser()
    env = os.environ.get(CACHE_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir("spacy-elmo", appauthor=False))


def name_problem(name: str, what: str) -> str:
    """Why `name` cannot be a model or file name in the cache ('' when it can), `what` naming it."""
    reason = unsafe_name_reason(name, single=True)
    if reason:
        reason += ", where a plain file name is needed"
    elif name in RESERVED_NAMES:
        reason = "is reserved: the cache keeps its partial downloads in a folder of that name; rename the model"
    return f"{what} {name!r} {reason}" if reason else ""


def _checked(name: str) -> str:
    problem = name_problem(name, "model name")
    if problem:
        raise DownloadError(problem)
    return name


def model_dir(name: str, cache: Path) -> Path:
    return cache / _checked(name)


def staging_dir(name: str, cache: Path) -> Path:
    return cache / "downloads" / _checked(name)


def lock_path(name: str, cache: Path) -> Path:
    return cache / "downloads" / f".{_checked(name)}.lock"


def is_downloaded(name: str, cache: Path) -> bool:
    """A model counts as downloaded once its record exists: the record is written last, before the rename."""
    return (model_dir(name, cache) / RECORD_NAME).is_file()


def redownload_command(directory: Path) -> str:
    """The command that replaces the model `download` installed in `directory` (altered or damaged)."""
    return f"python -m spacy_elmo download --force {directory.name} --cache-dir {directory.parent}"


def redownload_hint(directory: Path) -> str:
    """What to append to an error about the model in `directory`: how to replace it, when `download`
    installed it ('' for any other folder, which the user made and must mend)."""
    if not (directory / RECORD_NAME).is_file():
        return ""
    return f"; the model was installed by `download`: replace it with  {redownload_command(directory)}"


def mirror_base(override: Optional[str] = None) -> Optional[str]:
    """`override` (--base-url), else $SPACY_ELMO_MIRROR, else None (the publishers' own servers)."""
    base = override if override is not None else os.environ.get(MIRROR_ENV, "")
    base = base.strip()
    return base.rstrip("/") if base else None
