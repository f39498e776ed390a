"""The manifest of a corpus dump: which input became which shard, with what model, and which shards are
complete, so that a rerun redoes only what is missing or changed.

It is the one file the driver of a distributed dump writes (atomically, after every finished shard):
workers write only their shards. A shard counts as complete on a rerun only if the manifest says so for
the same input bytes (size and sha256), the same model and settings, and its file is there at the size
recorded. "The same model" is the same files, not the same path: `settings` hold the digest of the
model's files (`model_identity`), so weights replaced at the same path make a rerun redo every shard
instead of mixing shards of two models in one folder.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from ..errors import InputError, InputFileError
from ..formats import is_model_path, model_layout
from ..sources import ResolvedModel
from ..util.io import JSON_ERRORS, atomic_output, check_input_file, file_sha256, read_text

MANIFEST_NAME = "manifest.json"
# The folder of a TF-Hub module (a SavedModel) that holds its weights, beside the files its layout names.
_SAVED_MODEL_VARIABLES = "variables"
FORMAT_VERSION = 1
PENDING, DONE, FAILED = "pending", "done", "failed"


@dataclass
class Shard:
    """One input file and the HDF5 file its layers go to (`output`, relative to the output folder)."""

    input: str
    output: str
    size: int
    sha256: str
    status: str = PENDING
    sentences: Optional[int] = None
    tokens: Optional[int] = None
    output_size: Optional[int] = None
    error: Optional[str] = None


@dataclass
class Manifest:
    """What a dump into one folder was made from; `settings` are what make two runs' shards the same
    (model reference, statefulness)."""

    settings: Dict[str, Any]
    package_version: str
    shards: List[Shard] = field(default_factory=list)

    def to_json(self) -> str:
        data = {"format": FORMAT_VERSION, "package_version": self.package_version, "settings": self.settings}
        data["shards"] = [asdict(shard) for shard in self.shards]
        return json.dumps(data, indent=1) + "\n"

    def write(self, folder: Union[str, Path]) -> None:
        with atomic_output(Path(folder) / MANIFEST_NAME) as tmp:
            tmp.write_text(self.to_json(), encoding="utf-8")


def read_manifest(folder: Union[str, Path]) -> Optional[Manifest]:
    """The manifest a previous run left in `folder`, or None."""
    path = Path(folder) / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        data = json.loads(read_text(path, "manifest"))
        return Manifest(data["settings"], data["package_version"], [Shard(**shard) for shard in data["shards"]])
    except (*JSON_ERRORS, KeyError, TypeError) as err:
        raise InputFileError(
            f"manifest {path} is not a dump manifest ({err}); delete it (and the shards, or pass --overwrite) "
            "to start the dump over"
        ) from None


def expand_inputs(pattern: Union[str, Path]) -> List[Path]:
    """The files a glob pattern (`corpus/*.txt`, `**` included) or a single path names, sorted; an
    ElmoError when nothing matches."""
    text = str(pattern)
    if not glob.has_magic(text):
        return [check_input_file(text, "input")]
    paths = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
    if not paths:
        raise InputFileError(f"no input file matches {text!r}; check the pattern (quote it, so the shell leaves it)")
    return paths


def shard_names(inputs: Sequence[Path]) -> List[str]:
    """Each input's shard, relative to the output folder: its path below the inputs' common folder, with
    the suffix `.hdf5`; two inputs that would share a shard (`a.txt`, `a.text`) are an ElmoError."""
    resolved = [p.resolve() for p in inputs]
    base = Path(os.path.commonpath([str(p.parent) for p in resolved]))
    names: Dict[str, Path] = {}
    for path in resolved:
        name = path.relative_to(base).with_suffix(".hdf5").as_posix()
        if name in names:
            raise InputError(
                f"input files {names[name]} and {path} would both be written to {name}; rename one of them"
            )
        names[name] = path
    return list(names)


def is_complete(shard: Shard, previous: Optional[Manifest], settings: Dict[str, Any], folder: Path) -> bool:
    """Whether `previous` finished this shard from the same input bytes and settings, and its file is intact."""
    if previous is None or previous.settings != settings:
        return False
    for old in previous.shards:
        if old.output == shard.output and old.status == DONE:
            output = folder / shard.output
            same_input = (old.size, old.sha256) == (shard.size, shard.sha256)
            return same_input and output.is_file() and output.stat().st_size == old.output_size
    return False


def model_files(model: ResolvedModel) -> Dict[str, Path]:
    """The files the resolved model's weights and sizes are read from, by their role in its format
    (`options`, `weights`, ...; an archive is one file), so the same files given as a pair or as their
    directory are the same model."""
    if model.path is None:
        assert model.options is not None
        return {"options": model.options, **({} if model.weights is None else {"weights": model.weights})}
    path = model.path
    if not is_model_path(path) or not path.is_dir():
        return {"archive": path}
    layout = model_layout(path)
    files = {role: path / name for role, name in layout.files.items()}
    variables = path / layout.root / _SAVED_MODEL_VARIABLES
    if variables.is_dir():
        files.update(
            (p.relative_to(variables.parent).as_posix(), p) for p in sorted(variables.iterdir()) if p.is_file()
        )
    return files


def model_identity(files: Dict[str, Path]) -> str:
    """The sha256 of the model's files (role -> path, `model_files`): equal for a copy of the same files
    wherever it lies, different when any byte of them changed."""
    listing = "".join(f"{name}\t{file_sha256(path, 'model file')}\n" for name, path in sorted(files.items()))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()
