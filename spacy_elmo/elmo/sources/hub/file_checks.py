"""Whether a downloaded file is what its name claims, before it is installed: a publisher states no
checksum for most models, and a mirror or portal that answers 200 with an HTML page must not end up
installed as `weights.hdf5`. JSON must parse, HDF5 must open, an archive must list, a pickle must
start like one, and the assembled model must be detected as one with the weights' datasets present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import h5py

from ...errors import InputFileError
from ...formats.archive import ARCHIVE_SUFFIXES, member_names
from ...formats.detect import detect_layout
from ...util.io import HDF5_DAMAGE

# Datasets (and a group) every bilm-tf / AllenNLP / NLPL weights file holds.
WEIGHTS_DATASETS = ("char_embed", "CNN/W_cnn_0", "RNN_0")
_PICKLE_STARTS = (b"\x80", b"PK\x03\x04")


def _begins(path: Path) -> str:
    with open(path, "rb") as f:
        head = f.read(40)
    return f"it begins with {head!r}"


def file_problem(path: Path, name: str) -> str:
    """What is wrong with the file at `path`, to be installed as `name` ('' when it is what it claims)."""
    suffix = Path(name).suffix.lower()
    try:
        if suffix == ".json":
            json.loads(path.read_text(encoding="utf8"))
        elif suffix in (".hdf5", ".h5"):
            with h5py.File(path, "r"):
                pass
        elif suffix in (".pkl", ".pth"):
            with open(path, "rb") as f:
                if not f.read(4).startswith(_PICKLE_STARTS):
                    return f"is not a pickle ({_begins(path)})"
        elif name.lower().endswith(ARCHIVE_SUFFIXES):
            member_names(path)
    except HDF5_DAMAGE as err:
        kind = {".json": "JSON", ".hdf5": "HDF5", ".h5": "HDF5"}.get(suffix, "archive")
        detail = _begins(path) if kind != "archive" else str(err)
        return f"is not a readable {kind} file ({detail})"
    return ""


def model_problem(directory: Path) -> str:
    """What keeps the assembled model in `directory` from loading ('' when nothing found): a file that
    is not what its name claims, no model detected, or weights without the datasets they all hold."""
    names: List[str] = [p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()]
    for name in names:
        problem = file_problem(directory / name, name)
        if problem:
            return f"{name} {problem}"
    try:
        layout = detect_layout(names, str(directory))
    except InputFileError as err:
        return str(err)
    if "weights" not in layout.files:  # not an HDF5 weights file (ELMoForManyLangs, TF-Hub)
        return ""
    weights = layout.files["weights"]
    try:
        with h5py.File(directory / weights, "r") as f:
            missing = [name for name in WEIGHTS_DATASETS if name not in f]
    except HDF5_DAMAGE as err:
        return f"weights file {weights} is damaged ({type(err).__name__}: {err})"
    return f"weights file {weights} lacks {', '.join(missing)}" if missing else ""
