"""Which of the three model formats a directory or zip archive holds, told apart by its files.

- bilm-tf / AllenNLP: an options JSON and a weights HDF5 (`options.json` + `weights.hdf5`, or
  AllenNLP's `..._options.json` + `..._weights.hdf5`); `softmax.hdf5` and token-embedding files beside
  them are not the weights.
- NLPL: the same two files as `options.json` + `model.hdf5`, with the repository's `meta.json`.
- ELMoForManyLangs: `config.json`, `token_embedder.pkl`, `encoder.pkl` (with `char.dic`, `word.dic`
  and the model config the `config.json` names).

The files sit at the top of the directory or archive, or in its one subdirectory that holds them
(archives often wrap a model in a folder of its name). Two models, of one format or two, in one
folder or in two, are refused as ambiguous, naming their files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Dict, List, Optional, Sequence

from ..errors import InputFileError

BILM_TF = "bilm-tf"
NLPL = "nlpl"
MANYLANGS = "elmoformanylangs"

MANYLANGS_FILES = ("config.json", "token_embedder.pkl", "encoder.pkl")
_PREFERRED_WEIGHTS = ("weights.hdf5", "model.hdf5", "lm_weights.hdf5")


class ModelFormatError(InputFileError):
    """A directory or archive that holds no model of a known format, or more than one."""


@dataclass(frozen=True)
class ModelLayout:
    """Where a model's files are: `files` maps a role (`options`, `weights` for bilm-tf and NLPL;
    `config`, `token_embedder`, `encoder`, `char_dic`, `word_dic` for ELMoForManyLangs) to a path
    relative to the directory or archive, `root` is the folder that holds them ('' for the top)."""

    format: str
    root: str
    files: Dict[str, str]


def _in_root(names: Sequence[str], root: str) -> Dict[str, str]:
    """File name -> relative path, for the files directly inside `root`."""
    found: Dict[str, str] = {}
    for name in names:
        path = PurePosixPath(name)
        parent = "" if str(path.parent) == "." else str(path.parent)
        if parent == root:
            found[path.name] = name
    return found


def _bilm_tf_files(files: Dict[str, str]) -> Optional[Dict[str, str]]:
    options = ["options.json"] if "options.json" in files else [n for n in files if n.endswith("options.json")]
    weights = [n for n in files if n.endswith(".hdf5") and not n.startswith("softmax") and "token_embeddings" not in n]
    if len(weights) > 1:
        weights = [n for n in _PREFERRED_WEIGHTS if n in files] or [n for n in weights if "weights" in n]
    if len(options) != 1 or len(weights) != 1:
        return None
    return {"options": files[options[0]], "weights": files[weights[0]]}


def _layouts_at(files: Dict[str, str], root: str) -> List[ModelLayout]:
    """Every model whose files sit directly in `root` (more than one is ambiguous)."""
    found: List[ModelLayout] = []
    if all(name in files for name in MANYLANGS_FILES):
        roles = {"config": "config.json", "token_embedder": "token_embedder.pkl", "encoder": "encoder.pkl"}
        manylangs = {role: files[name] for role, name in roles.items()}
        for role, name in (("char_dic", "char.dic"), ("word_dic", "word.dic")):
            if name in files:
                manylangs[role] = files[name]
        found.append(ModelLayout(MANYLANGS, root, manylangs))
    bilm_tf = _bilm_tf_files(files)
    if bilm_tf is not None:
        found.append(ModelLayout(NLPL if "meta.json" in files else BILM_TF, root, bilm_tf))
    return found


def _ambiguous(source: str, layouts: List[ModelLayout]) -> ModelFormatError:
    shown = "; ".join(f"{layout.format}: {', '.join(sorted(layout.files.values()))}" for layout in layouts)
    return ModelFormatError(f"{source} holds several models ({shown}); give the path of one, or move the others away")


def detect_layout(names: List[str], source: str) -> ModelLayout:
    """The model in a directory or archive whose files (relative paths) are `names`; `source` names it
    in errors."""
    top = _layouts_at(_in_root(names, ""), "")
    if len(top) > 1:
        raise _ambiguous(source, top)
    if top:
        return top[0]
    folders = sorted({PurePosixPath(n).parts[0] for n in names if len(PurePosixPath(n).parts) == 2} - {"__MACOSX"})
    inside = [layout for f in folders for layout in _layouts_at(_in_root(names, f), f)]
    if len(inside) == 1:
        return inside[0]
    if len(inside) > 1:
        raise _ambiguous(source, inside)
    shown = ", ".join(sorted(names)[:12]) + (" ..." if len(names) > 12 else "")
    raise ModelFormatError(
        f"{source} holds no ELMo model of a known format (files: {shown or 'none'}). Expected an options "
        "JSON with a weights .hdf5 (bilm-tf, AllenNLP, NLPL), or config.json, token_embedder.pkl and "
        "encoder.pkl (ELMoForManyLangs); where two .hdf5 files could be the weights, give "
        "load_bilm(options, weights) the two paths"
    )
