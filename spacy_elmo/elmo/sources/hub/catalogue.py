"""The catalogue of published ELMo models (catalogue.json beside this file), validated on load.

A value the publisher does not state is null in the file, never guessed; the download records what it
saw instead (see `record.py`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Annotated, List, Literal, Optional, Union, cast
from urllib.parse import unquote, urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from ...formats import format_names
from ...util.validation import validate
from .cache_layout import name_problem
from .errors import InputFileError, ModelReferenceError

CATALOGUE_PATH = Path(__file__).with_name("catalogue.json")


class _Strict(BaseModel):
    """Unknown keys are refused. Validators raise InputFileError, a ValueError, which pydantic collects;
    `load_catalogue` reports the first few with the file's name (elmo/util/validation.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _plain_name(what: str) -> AfterValidator:
    """A check that a name is one plain file or folder name (no `..`, no separator), naming `what`."""

    def check(name: str) -> str:
        problem = name_problem(name, what)
        if problem:
            raise InputFileError(problem)
        return name

    return AfterValidator(check)


Sha256 = Optional[Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]]
Sha1 = Optional[Annotated[str, Field(pattern=r"^[0-9a-f]{40}$", description="the publisher's, if no sha256")]]


def _https_file_url(url: str) -> str:
    """`url` if it is an https URL whose path ends in a plain file name, else InputFileError."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.netloc or not parts.path.strip("/"):
        raise InputFileError(f"{url!r} is not an https URL of a file")
    problem = name_problem(_last_segment(url), f"the file name at the end of URL {url!r}")
    if problem:
        raise InputFileError(problem)
    return url


HttpsFileUrl = Annotated[str, AfterValidator(_https_file_url)]


class ModelFile(_Strict):
    """One file to fetch. `save_as` renames it in the model directory (AllenNLP's long names become the
    `options.json` + `weights.hdf5` layout); an archive is unpacked instead of kept.

    `url` and then each of `mirrors` is tried in order, so a dead publisher link falls back to a copy of
    the same bytes elsewhere. A file its publisher serves only to browsers (Google Drive, figshare's
    private links) has no `url`: `by_hand` names the page to fetch it from and `name` what to save it
    as, and `download` says so instead of fetching."""

    url: Optional[HttpsFileUrl] = None
    mirrors: List[HttpsFileUrl] = Field(default_factory=list, description="the same file elsewhere, tried in order")
    by_hand: Optional[str] = Field(None, description="the https page a person fetches the file from")
    name: Optional[Annotated[str, _plain_name("name")]] = Field(None, description="a by_hand file's name")
    save_as: Optional[Annotated[str, _plain_name("save_as")]] = None
    size: Optional[int] = Field(None, gt=0, description="bytes; null when the publisher does not state it")
    sha256: Sha256 = None
    sha1: Sha1 = None
    archive: Optional[Literal["zip", "tar"]] = None  # tar: .tar, .tar.gz and kin (TF-Hub modules)

    @model_validator(mode="after")
    def _one_way_to_fetch(self) -> "ModelFile":
        if (self.url is None) == (self.by_hand is None):
            raise InputFileError("a file has either a url (fetched) or a by_hand page (fetched by a person)")
        if self.by_hand is not None:
            if not self.by_hand.startswith("https://"):
                raise InputFileError(f"by_hand page {self.by_hand!r} is not an https page")
            if self.name is None or self.mirrors:
                raise InputFileError(f"a by_hand file ({self.by_hand}) needs a name and takes no mirrors")
        elif self.name is not None:
            raise InputFileError(f"{self.url}: a fetched file is named by its URL, so it takes no name")
        return self

    @model_validator(mode="after")
    def _archive_not_renamed(self) -> "ModelFile":
        if self.archive and self.save_as:
            raise InputFileError("an archive is unpacked, so it takes no save_as")
        return self

    @property
    def file_name(self) -> str:
        """The name the file is downloaded under: the last part of the URL's path, decoded (checked), or
        a by_hand file's `name`."""
        if self.url is None:
            return cast(str, self.name)
        return _last_segment(self.url)

    @property
    def sources(self) -> List[str]:
        """The URLs to fetch the file from, in the order they are tried (none for a by_hand file)."""
        return [] if self.url is None else [self.url, *self.mirrors]


class JoinedArchive(_Strict):
    """An archive its publisher split into parts (a host's file-size limit): the model's files, in order,
    are its parts; joined, checked against the stated digests and unpacked like a whole archive."""

    name: Annotated[str, _plain_name("joined_archive name")]
    archive: Literal["zip", "tar"]
    sha256: Sha256 = None
    sha1: Sha1 = None


def _last_segment(url: str) -> str:
    """The URL path's last segment, %-decoded after the split, so that `%2F` cannot add a folder."""
    return unquote(urlsplit(url).path.rpartition("/")[2])


class ModelEntry(_Strict):
    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$"), _plain_name("model name")]
    language: str = Field(pattern=r"^[a-z]{2,3}$", description="ISO 639 code, as spaCy names languages")
    language_name: str
    format: str = Field(description="a format this package reads (formats.detect.FORMATS), so every entry has a loader")
    description: str
    layers: Optional[int] = Field(None, gt=0)
    lstm_dim: Optional[int] = Field(None, gt=0)
    projection_dim: Optional[int] = Field(None, gt=0)
    highway_layers: Optional[int] = Field(None, ge=0)
    parameters_millions: Optional[float] = Field(None, gt=0)
    files: List[ModelFile] = Field(min_length=1)
    joined_archive: Optional[JoinedArchive] = None
    license: Optional[str] = Field(None, description="null when the source page states none")
    source: str
    notes: Optional[str] = None

    @field_validator("format")
    @classmethod
    def _readable_format(cls, name: str) -> str:
        if name not in format_names():
            raise InputFileError(f"format {name!r} has no loader; formats read: {', '.join(format_names())}")
        return name

    @model_validator(mode="after")
    def _files_fit(self) -> "ModelEntry":
        names = [f.save_as or f.file_name for f in self.files]
        if len(set(names)) != len(names):
            raise InputFileError(f"model {self.name!r} saves two files under one name: {names}")
        if any(f.archive for f in self.files) and len(self.files) > 1:
            raise InputFileError(f"model {self.name!r}: an archive must be the model's only file")
        joined = self.joined_archive
        if joined is not None and (len(self.files) < 2 or any(f.archive or f.save_as for f in self.files)):
            raise InputFileError(
                f"model {self.name!r}: a joined_archive needs two or more files, its parts, with no archive "
                "or save_as of their own"
            )
        if joined is not None and joined.name in names:
            raise InputFileError(f"model {self.name!r}: joined_archive {joined.name!r} has the name of a part")
        if not self.source.startswith("https://"):
            raise InputFileError(f"model {self.name!r}: source {self.source!r} is not an https page")
        return self

    @property
    def size_label(self) -> str:
        """'2x4096/512' (layers x LSTM dim / projection), '?' where a part is not published."""
        if self.layers is None and self.lstm_dim is None and self.projection_dim is None:
            return "?"
        return f"{self.layers or '?'}x{self.lstm_dim or '?'}/{self.projection_dim or '?'}"


class Catalogue(_Strict):
    catalogue_version: int
    about: str
    models: List[ModelEntry]

    @model_validator(mode="after")
    def _unique_names(self) -> "Catalogue":
        seen = set()
        for entry in self.models:
            if entry.name in seen:
                raise InputFileError(f"model name {entry.name!r} appears twice")
            seen.add(entry.name)
        return self

    def get(self, name: str) -> ModelEntry:
        for entry in self.models:
            if entry.name == name:
                return entry
        raise ModelReferenceError(f"no model named {name!r} in the catalogue{_suggestion(name, self.names())}")

    def names(self) -> List[str]:
        return [entry.name for entry in self.models]

    def in_language(self, language: str) -> List[ModelEntry]:
        code = language.lower()
        return [e for e in self.models if e.language == code or e.language_name.lower() == code]


def _suggestion(name: str, names: List[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"{hint} `python -m spacy_elmo models` lists them all"


def load_catalogue(path: Union[str, Path, None] = None) -> Catalogue:
    """The package's catalogue, or the one at `path` (a mirror's own list, or a test's)."""
    if path is None:
        return _packaged_catalogue()
    return _read(Path(path))


@lru_cache(maxsize=1)
def _packaged_catalogue() -> Catalogue:
    return _read(CATALOGUE_PATH)


def _read(path: Path) -> Catalogue:
    try:
        data = json.loads(path.read_text(encoding="utf8"))
    except FileNotFoundError:
        raise InputFileError(f"catalogue file {path} does not exist") from None
    except (OSError, ValueError, RecursionError) as err:  # undecodable, not JSON, nested too deep
        raise InputFileError(f"catalogue file {path} is not readable JSON: {err}") from None
    return validate(Catalogue, data, InputFileError, f"catalogue file {path} is not a valid catalogue: ")
