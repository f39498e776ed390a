"""Which model format a directory or zip archive holds, told apart by its files.

The formats are tried in the order of `formats.FORMATS` (each one's `detect`); the first that
recognises the files wins. The files sit at the top of the directory or archive, or in its one
subdirectory that holds them (archives often wrap a model in a folder of its name). Two models, of one format or two,
in one folder or in two, are refused as ambiguous, naming their files.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Dict, List, Sequence

from .archive import is_platform_metadata
from .base import ModelFormat, ModelLayout
from .errors import ModelFormatError


def _in_root(names: Sequence[str], root: str) -> Dict[str, str]:
    """File name -> relative path, for the files directly inside `root`."""
    found: Dict[str, str] = {}
    for name in names:
        path = PurePosixPath(name)
        parent = "" if str(path.parent) == "." else str(path.parent)
        if parent == root:
            found[path.name] = name
    return found


def _layouts_at(files: Dict[str, str], root: str, formats: Sequence[ModelFormat]) -> List[ModelLayout]:
    """Every model whose files sit directly in `root` (more than one is ambiguous). A format that
    recognises the same files as an earlier one (bilm-tf's, after NLPL's) adds no second model."""
    found: List[ModelLayout] = []
    for model_format in formats:
        roles = model_format.detect(files)
        if roles is not None and not any(set(roles.values()) <= set(seen.files.values()) for seen in found):
            found.append(ModelLayout(model_format.name, root, roles))
    return found


def _ambiguous(source: str, layouts: List[ModelLayout]) -> ModelFormatError:
    shown = "; ".join(f"{layout.format}: {', '.join(sorted(layout.files.values()))}" for layout in layouts)
    return ModelFormatError(f"{source} holds several models ({shown}); give the path of one, or move the others away")


def detect_layout(names: List[str], source: str, formats: Sequence[ModelFormat]) -> ModelLayout:
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
    shown = ", ".join(sorted(names)[:12]) + (" ..." if len(names) > 12 else "")
    raise ModelFormatError(
        f"{source} holds no ELMo model of a known format (files: {shown or 'none'}). Expected "
        f"{', or '.join(f.expects for f in formats)}; where two .hdf5 files could be the weights, give "
        "load_bilm(options, weights) the two paths"
    )
