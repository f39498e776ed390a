"""Every published ELMo format behind one loader: `load_model(path)` takes a directory or a zip archive
of a bilm-tf / AllenNLP model, an NLPL model or an ELMoForManyLangs model (detect.py tells them apart
by their files) and returns a BiLM that runs on this package's code.

Archives are checked member by member and unpacked into a temporary directory that is gone once the
weights are in memory (archive.py). `describe` / `rebuild` carry what a format needs besides the
options and the parameters (ELMoForManyLangs' vocabularies) through a saved spaCy pipeline.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple, Union

from ..errors import InputFileError
from ..nn.bilm import BiLM
from ..options import ElmoOptions
from .archive import ArchiveError, is_archive, member_names, unpacked
from .detect import BILM_TF, MANYLANGS, NLPL, ModelFormatError, ModelLayout, detect_layout
from .manylangs import ManyLangsBiLM, load_manylangs, manylangs_options
from .manylangs_chars import ManyLangsVocab

PathLike = Union[str, Path]
DOWNLOAD_RECORD = "spacy_elmo_download.json"  # what `download` (spacy_elmo.hub) writes into each model it installs


def _redownload_hint(directory: Path) -> str:
    """For a model `download` installed: the command that replaces a damaged copy."""
    if not (directory / DOWNLOAD_RECORD).is_file():
        return ""
    return (
        f"; the model was installed by `download`: replace it with  python -m spacy_elmo download --force "
        f"{directory.name} --cache-dir {directory.parent}"
    )


def is_model_path(path: PathLike) -> bool:
    """Whether `path` is something `load_model` reads: a directory or an archive (zip or tar; a damaged
    one too, so that it is reported as a damaged archive and not read as an options file)."""
    path = Path(path)
    return path.is_dir() or is_archive(path)


def _files_under(directory: Path) -> list:
    """Relative paths of the files in `directory` and its direct subdirectories (where models sit)."""
    return [
        p.relative_to(directory).as_posix() for pattern in ("*", "*/*") for p in directory.glob(pattern) if p.is_file()
    ]


@contextlib.contextmanager
def _opened(path: PathLike, small_files_only: bool = False) -> Iterator[Tuple[Path, ModelLayout]]:
    """The directory holding the model's files and their layout; an archive is unpacked for the block
    (its JSON files only, with `small_files_only`)."""
    path = Path(path)
    if path.is_dir():
        try:
            yield path, detect_layout(_files_under(path), str(path))
        except InputFileError as err:
            hint = _redownload_hint(path)
            if not hint:
                raise
            raise type(err)(f"{err}{hint}") from None
        return
    if not path.exists():
        raise InputFileError(f"model {path} does not exist; give a model directory, a zip archive or an options.json")
    if not is_archive(path):
        raise ModelFormatError(
            f"model {path} is neither a directory nor a zip or tar archive; for a bilm-tf model give "
            "load_bilm(options.json, weights.hdf5)"
        )
    layout = detect_layout(member_names(path), str(path))
    with unpacked(path, (lambda name: name.endswith(".json")) if small_files_only else None) as directory:
        try:
            yield directory, layout
        except InputFileError as err:
            # Names inside the temporary directory mean little to the user: say which archive it was.
            raise type(err)(f"in model archive {path}: {err}") from None


def model_layout(path: PathLike) -> ModelLayout:
    """The format and files of the model at `path` (nothing but names is read)."""
    path = Path(path)
    if path.is_dir():
        return detect_layout(_files_under(path), str(path))
    if is_archive(path):
        return detect_layout(member_names(path), str(path))
    raise ModelFormatError(f"model {path} is neither a directory nor a zip or tar archive")


def model_options(path: PathLike) -> ElmoOptions:
    """The sizes of the model at `path`, from its small files only (no weights are read)."""
    with _opened(path, small_files_only=True) as (directory, layout):
        if layout.format == MANYLANGS:
            return manylangs_options(directory, layout)
        return ElmoOptions.from_file(directory / layout.files["options"])


def load_model(path: PathLike, warm_start: bool = False) -> BiLM:
    """The model in the directory or zip archive `path`, whatever its format, in eval mode."""
    from ..weights import load_bilm  # weights.load_bilm hands directories and archives to this function

    with _opened(path) as (directory, layout):
        if layout.format == MANYLANGS:
            bilm: BiLM = load_manylangs(directory, layout)
        else:
            bilm = load_bilm(directory / layout.files["options"], directory / layout.files["weights"])
    if warm_start:
        bilm.set_warm_start()
    return bilm


def describe(bilm: BiLM) -> Dict[str, Any]:
    """What rebuilds `bilm` besides its options and parameters: empty for the bilm-tf layout."""
    return {"manylangs": bilm.description()} if isinstance(bilm, ManyLangsBiLM) else {}


def rebuild(options: ElmoOptions, description: Dict[str, Any]) -> BiLM:
    """An untrained BiLM of the format `describe` recorded (parameters are loaded afterwards)."""
    manylangs = description.get("manylangs")
    if manylangs is None:
        return BiLM(options)
    return ManyLangsBiLM(options, ManyLangsVocab.from_dict(manylangs["vocab"]), int(manylangs["word_dim"]))


__all__ = [
    "BILM_TF",
    "MANYLANGS",
    "NLPL",
    "ArchiveError",
    "ManyLangsBiLM",
    "ModelFormatError",
    "ModelLayout",
    "describe",
    "is_model_path",
    "load_model",
    "model_layout",
    "model_options",
    "rebuild",
]
