"""Which model format a directory or zip archive holds, told apart by its files.

`FORMATS` lists every published format by its files alone (name, files, the module that reads it), so
that telling formats apart, as the catalogue and `download` do, loads no reader (torch, h5py). They are
tried in its order; the first that recognises the files wins, so a format whose files are a superset of
another's comes before it (NLPL's are bilm-tf's plus `meta.json`). The files sit at the top of the
directory or archive, or in its one subdirectory that holds them (archives often wrap a model in a folder
of its name). Two models, of one format or two, in one folder or in two, are refused as ambiguous,
naming their files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .archive import is_platform_metadata
from .errors import InputFileError

# Role -> path of a format's files among a folder's files (file name -> path), or None where it does not hold it.
Roles = Optional[Dict[str, str]]

_PREFERRED_WEIGHTS = ("weights.hdf5", "model.hdf5", "lm_weights.hdf5")
# What a saved spaCy pipeline holds at its top: its biLM sits in a component's thinc bytes, which only the
# spaCy side reads (`export --model PIPELINE_DIR` takes it out).
SPACY_PIPELINE_FILES = ("config.cfg", "meta.json")


@dataclass(frozen=True)
class ModelLayout:
    """Where a model's files are: `files` maps a role (`options`, `weights` for bilm-tf and NLPL;
    `config`, `token_embedder`, `encoder`, `char_dic`, `word_dic` for ELMoForManyLangs) to a path
    relative to the directory or archive, `root` is the folder that holds them ('' for the top)."""

    format: str
    root: str
    files: Dict[str, str]


@dataclass(frozen=True)
class FormatFiles:
    """One published format as its files tell it: `name` is how the catalogue's `format` field names it,
    `expects` says which files it needs (for the error when no format matches), `detect` finds them, and
    `reader` is `module.NAME` of its base.ModelFormat in this package."""

    name: str
    expects: str
    detect: Callable[[Mapping[str, str]], Roles]
    reader: str


def _bilm_tf(files: Mapping[str, str]) -> Roles:
    """An options JSON and a weights HDF5 (`options.json` + `weights.hdf5`, or AllenNLP's
    `..._options.json` + `..._weights.hdf5`); `softmax.hdf5` and token-embedding files are not the weights."""
    options = ["options.json"] if "options.json" in files else [n for n in files if n.endswith("options.json")]
    weights = [n for n in files if n.endswith(".hdf5") and not n.startswith("softmax") and "token_embeddings" not in n]
    if len(weights) > 1:
        weights = [n for n in _PREFERRED_WEIGHTS if n in files] or [n for n in weights if "weights" in n]
    if len(options) != 1 or len(weights) != 1:
        return None
    return {"options": files[options[0]], "weights": files[weights[0]]}


def _safetensors(files: Mapping[str, str]) -> Roles:
    """An options.json and model.safetensors; bilm-tf's weights HDF5 beside it (`export` writes both) is
    the same model, so it is taken as part of this one (`hdf5`) rather than as a second model."""
    if "model.safetensors" not in files or "options.json" not in files:
        return None
    found = {"options": files["options.json"], "weights": files["model.safetensors"]}
    hdf5 = _bilm_tf(files)
    if hdf5 is not None and hdf5["options"] == found["options"]:
        found["hdf5"] = hdf5["weights"]
    return found


def _nlpl(files: Mapping[str, str]) -> Roles:
    return _bilm_tf(files) if "meta.json" in files else None


def _manylangs(files: Mapping[str, str]) -> Roles:
    roles = {"config": "config.json", "token_embedder": "token_embedder.pkl", "encoder": "encoder.pkl"}
    if not all(name in files for name in roles.values()):
        return None
    found = {role: files[name] for role, name in roles.items()}
    found.update(
        {role: files[name] for role, name in (("char_dic", "char.dic"), ("word_dic", "word.dic")) if name in files}
    )
    return found


def _tfhub(files: Mapping[str, str]) -> Roles:
    if "tfhub_module.pb" in files and "saved_model.pb" in files:
        return {"module": files["tfhub_module.pb"], "graph": files["saved_model.pb"]}
    return None


TFHUB_FILES = FormatFiles(
    "tfhub",
    "tfhub_module.pb, saved_model.pb and variables/variables.index (TF-Hub module)",
    _tfhub,
    ".tfhub.TFHUB",
)

# Adding a format is its reader module plus one line here.
FORMATS: Tuple[FormatFiles, ...] = (
    FormatFiles(
        "elmoformanylangs",
        "config.json, token_embedder.pkl and encoder.pkl (ELMoForManyLangs)",
        _manylangs,
        "..manylangs.reader.MANYLANGS",
    ),
    # The NLPL repository's models are bilm-tf's files plus its `meta.json`: read as bilm-tf's, told apart
    # so that the catalogue and errors can name them.
    FormatFiles("nlpl", "options.json, model.hdf5 and meta.json (NLPL)", _nlpl, ".bilm_tf.BILM_TF"),
    FormatFiles(
        "safetensors",
        "options.json and model.safetensors (spacy-elmo's export)",
        _safetensors,
        ".bilm_safetensors.SAFETENSORS",
    ),
    FormatFiles("bilm-tf", "an options JSON with a weights .hdf5 (bilm-tf, AllenNLP)", _bilm_tf, ".bilm_tf.BILM_TF"),
    TFHUB_FILES,
)


def _in_root(names: Sequence[str], root: str) -> Dict[str, str]:
    """File name -> relative path, for the files directly inside `root`."""
    found: Dict[str, str] = {}
    for name in names:
        path = PurePosixPath(name)
        parent = "" if str(path.parent) == "." else str(path.parent)
        if parent == root:
            found[path.name] = name
    return found


def _layouts_at(files: Dict[str, str], root: str, formats: Sequence[FormatFiles]) -> List[ModelLayout]:
    """Every model whose files sit directly in `root` (more than one is ambiguous). A format that
    recognises the same files as an earlier one (bilm-tf's, after NLPL's) adds no second model."""
    found: List[ModelLayout] = []
    for model_format in formats:
        roles = model_format.detect(files)
        if roles is not None and not any(set(roles.values()) <= set(seen.files.values()) for seen in found):
            found.append(ModelLayout(model_format.name, root, roles))
    return found


def _ambiguous(source: str, layouts: List[ModelLayout]) -> InputFileError:
    shown = "; ".join(f"{layout.format}: {', '.join(sorted(layout.files.values()))}" for layout in layouts)
    return InputFileError(f"{source} holds several models ({shown}); give the path of one, or move the others away")


def detect_layout(names: List[str], source: str, formats: Sequence[FormatFiles] = FORMATS) -> ModelLayout:
    """The model in a directory or archive whose files (relative paths) are `names`, of the first of
    `formats` that recognises them; `source` names it in errors. What macOS adds is not looked at."""
    names = [name for name in names if not is_platform_metadata(name)]
    top = _layouts_at(_in_root(names, ""), "", formats)
    if len(top) > 1:
        raise _ambiguous(source, top)
    if top:
        return top[0]
    folders = sorted({PurePosixPath(n).parts[0] for n in names if len(PurePosixPath(n).parts) == 2})
    inside = [layout for f in folders for layout in _layouts_at(_in_root(names, f), f, formats)]
    if len(inside) == 1:
        return inside[0]
    if len(inside) > 1:
        raise _ambiguous(source, inside)
    if set(SPACY_PIPELINE_FILES) <= set(names):
        raise InputFileError(
            f"{source} is a saved spaCy pipeline, whose biLM only spaCy reads: take it out in the published "
            f"layout with `python -m spacy_elmo export DIR --model {source}`, then load DIR"
        )
    shown = ", ".join(sorted(names)[:12]) + (" ..." if len(names) > 12 else "")
    raise InputFileError(
        f"{source} holds no ELMo model of a known format (files: {shown or 'none'}). Expected "
        f"{', or '.join(f.expects for f in formats)}; where two .hdf5 files could be the weights, give "
        "load_bilm(options, weights) the two paths"
    )
