"""Every published ELMo format behind one loader: `load_model(path)` takes a directory or a zip archive
of a model of any format in `FORMATS` and returns a BiLM that runs on this package's code.

Each format is told apart by its files (detect.py, which lists them in `FORMATS`) and read by one module
with the same small interface (base.ModelFormat). A reader is imported when a model of its format is
read: telling formats apart and listing them load neither torch nor h5py (the catalogue and `download`
do only that), and so does importing this package; its other names are imported on first use.

Archives are checked member by member and unpacked into a temporary directory that is gone once the
weights are in memory (archive.py). `describe` / `rebuild` carry what a format needs besides the
options and the parameters (ELMoForManyLangs' vocabularies) through a saved spaCy pipeline.
"""

from __future__ import annotations

import contextlib
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Tuple, Union

from ..errors import InputFileError
from ..util.lazy import lazy_names
from .archive import ArchiveError, is_archive, member_names, unpacked
from .detect import FORMATS, SPACY_PIPELINE_FILES, FormatFiles, ModelLayout, detect_layout
from .errors import WeightsError

if TYPE_CHECKING:
    from ..nn.bilm import BiLM
    from ..nn.options import ElmoOptions
    from .base import ModelFormat as ModelFormat
    from .bilm_tf import load_options_and_weights as load_options_and_weights
    from .bilm_tf import load_weights as load_weights
    from .bilm_tf import save_weights as save_weights

PathLike = Union[str, Path]

_LAZY = {
    ".base": ["ModelFormat"],
    ".bilm_tf": ["load_options_and_weights", "load_weights", "save_weights"],
}


def format_names() -> List[str]:
    """The names of the formats this package reads (the catalogue's `format` values)."""
    return [model_format.name for model_format in FORMATS]


def reader(name: str) -> ModelFormat:
    """The reader of format `name` (one of `format_names()`), its module imported now."""
    files = next(model_format for model_format in FORMATS if model_format.name == name)
    module, attribute = files.reader.rsplit(".", 1)
    return getattr(importlib.import_module(module, __name__), attribute)


def is_model_path(path: PathLike) -> bool:
    """Whether `path` is something `load_model` reads: a directory or an archive (zip or tar; a damaged
    one too, so that it is reported as a damaged archive and not read as an options file)."""
    path = Path(path)
    return path.is_dir() or is_archive(path)


def is_spacy_pipeline(path: PathLike) -> bool:
    """Whether `path` is a folder spaCy saved a pipeline into (`nlp.to_disk`, `spacy train`'s model-best),
    whose biLM only the spaCy side reads."""
    return all((Path(path) / name).is_file() for name in SPACY_PIPELINE_FILES)


def _files_under(directory: Path) -> list:
    """Relative paths of the files in `directory` and its direct subdirectories (where models sit)."""
    return [
        p.relative_to(directory).as_posix() for pattern in ("*", "*/*") for p in directory.glob(pattern) if p.is_file()
    ]


@contextlib.contextmanager
def _opened(path: PathLike, small_files_only: bool = False) -> Iterator[Tuple[Path, ModelLayout]]:
    """The directory holding the model's files and their layout; an archive is unpacked for the block
    (its JSON files and checkpoint indexes only, with `small_files_only`)."""
    path = Path(path)
    if path.is_dir():
        yield path, detect_layout(_files_under(path), str(path))
        return
    if not path.exists():
        raise InputFileError(f"model {path} does not exist; give a model directory, a zip archive or an options.json")
    if not is_archive(path):
        raise InputFileError(
            f"model {path} is neither a directory nor a zip or tar archive; for a bilm-tf model give "
            "load_bilm(options.json, weights.hdf5)"
        )
    layout = detect_layout(member_names(path), str(path))
    with unpacked(path, (lambda name: name.endswith((".json", ".index"))) if small_files_only else None) as directory:
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
    raise InputFileError(f"model {path} is neither a directory nor a zip or tar archive")


def model_options(path: PathLike) -> ElmoOptions:
    """The sizes of the model at `path`, from its small files only (no weights are read)."""
    with _opened(path, small_files_only=True) as (directory, layout):
        return reader(layout.format).read_options(directory, layout)


def load_model(path: PathLike, warm_start: bool = False) -> BiLM:
    """The model in the directory or zip archive `path`, whatever its format, in eval mode."""
    with _opened(path) as (directory, layout):
        bilm = reader(layout.format).load(directory, layout)
    if warm_start:
        bilm.set_warm_start()
    return bilm


def describe(bilm: BiLM) -> Dict[str, Any]:
    """What rebuilds `bilm` besides its options and parameters, under its format's key (empty for
    bilm-tf's layout, which needs nothing more)."""
    for model_format in _readers():
        description = model_format.describe(bilm)
        if description is not None and model_format.description_key is not None:
            return {model_format.description_key: description}
    return {}


def rebuild(options: ElmoOptions, saved: Dict[str, Any]) -> BiLM:
    """An untrained BiLM of the format whose `describe` output `saved` holds (parameters are loaded
    afterwards)."""
    for model_format in _readers():
        key = model_format.description_key
        if key is not None and saved.get(key) is not None:
            return model_format.rebuild(options, saved[key])
    from ..nn.bilm import BiLM

    return BiLM(options)


def _readers() -> List[ModelFormat]:
    return [reader(model_format.name) for model_format in FORMATS]


__getattr__, __dir__, _lazy_all = lazy_names(__name__, _LAZY)

__all__ = [
    *_lazy_all,
    "FORMATS",
    "ArchiveError",
    "FormatFiles",
    "InputFileError",
    "ModelLayout",
    "WeightsError",
    "describe",
    "format_names",
    "is_model_path",
    "is_spacy_pipeline",
    "load_model",
    "model_layout",
    "model_options",
    "reader",
    "rebuild",
]
