"""Reading and writing the `elmo` component's saved parts: the biLM layer's bytes (`model`), the
pooling's (`pooling`), and each file replaced whole.

The settings stay the config's (thinc would write the saved attrs over them), and a saved pooling of
another kind than the config builds is not read: the config's is used as it builds.

The saved bytes carry their sha256: a changed byte in a weight gives other vectors with no error of its
own (a dtype `F32` read as `I32` loads), so it is found by the digest, at load. Pipelines saved before the
digest hold thinc's bytes alone and load unchecked. Bytes that do not decode, damaged or of another
program, give `SavedWeightsError`, never the decoder's own error.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable, Dict, Iterable

import srsly
from spacy.util import from_bytes, from_disk, to_bytes, to_disk
from thinc.api import Model

from ..elmo.errors import ElmoError
from ..elmo.util.io import atomic_output
from .bilm_layer.bilm_holder import DECODE_ERRORS, SAVED_FIX, decoded, first_line
from .bilm_layer.thinc_bilm import ensure_loaded, get_bilm
from .errors import SavedWeightsError

# What thinc writes for a model (`Model.to_dict`): all a pipeline saved before the digest holds.
_THINC_KEYS = {"nodes", "attrs", "params", "shims"}
_DIGEST_KEYS = {"model", "sha256"}


def model_bytes(model: Model) -> bytes:
    """The bytes of `model` (the biLM layer's) as the component saves them: thinc's, with their sha256."""
    data = model.to_bytes()
    return srsly.msgpack_dumps({"model": data, "sha256": hashlib.sha256(data).hexdigest()})


def load_model_bytes(model: Model, data: bytes) -> None:
    """The biLM layer `model` from `data`, checked (digest, a thinc model's bytes, the width)."""
    msg = _thinc_message(data, "the saved elmo layer")
    try:
        _check_width(model, msg)
        model.from_dict(msg)
    except ElmoError:
        raise
    except DECODE_ERRORS as err:
        raise SavedWeightsError(f"the saved elmo layer does not load ({first_line(err)}): {SAVED_FIX}") from None
    bilm = get_bilm(model)
    if bilm is not None:  # the width the biLM gives, whatever the saved dims say
        model.set_dim("nO", bilm.output_dim, force=True)


def load_pooling_bytes(pooling: Model, data: bytes) -> None:
    """The pooling's parameters from `data` (checked: digest, a thinc model's bytes) where the saved
    pooling has the same layers as `pooling`, its attrs kept as configured; a pooling of another kind is
    left as the config builds it."""
    msg = _thinc_message(data, "the saved elmo pooling")
    if [node.get("name") for node in msg["nodes"]] != [node.name for node in pooling.walk()]:
        return
    configured = [dict(node.attrs) for node in pooling.walk()]
    try:
        pooling.from_dict(msg)
    except DECODE_ERRORS as err:
        raise SavedWeightsError(f"the saved elmo pooling does not load ({first_line(err)}): {SAVED_FIX}") from None
    finally:
        for node, attrs in zip(pooling.walk(), configured):
            node.attrs.clear()
            node.attrs.update(attrs)


def _thinc_message(data: bytes, what: str) -> Dict[str, Any]:
    """thinc's message inside `data` (a model's saved bytes), the digest checked."""
    msg = decoded(_checked(data, what), what)
    if not _THINC_KEYS <= set(msg) or not all(isinstance(msg[key], list) for key in _THINC_KEYS):
        raise SavedWeightsError(f"{what} is not a thinc model's bytes: {SAVED_FIX}")
    return msg


def _checked(data: bytes, what: str) -> bytes:
    """thinc's bytes inside `data`, their digest checked (bytes saved before the digest: as they are)."""
    msg = decoded(data, what)
    if set(msg) == _THINC_KEYS:
        return data
    if set(msg) != _DIGEST_KEYS or not isinstance(msg["model"], bytes) or not isinstance(msg["sha256"], str):
        raise SavedWeightsError(f"{what} holds neither a model nor its digest: {SAVED_FIX}")
    if hashlib.sha256(msg["model"]).hexdigest() != msg["sha256"]:
        raise SavedWeightsError(
            f"{what}'s bytes fail their sha256 check: they changed after the pipeline was saved "
            f"(a damaged disk or copy); {SAVED_FIX}"
        )
    return msg["model"]


def _check_width(model: Model, msg: Dict[str, Any]) -> None:
    """A layer that already has its width (loaded or initialized) keeps it: thinc would refuse the saved
    one with its own error."""
    saved = msg["nodes"][0]["dims"].get("nO")
    if model.has_dim("nO") and saved is not None and saved != model.get_dim("nO"):
        raise SavedWeightsError(
            f"the saved elmo biLM gives {saved}-wide layers but this component's gives {model.get_dim('nO')}-wide "
            "ones, which its listeners were built for: load the saved pipeline whole (spacy.load), or train "
            "the listening components again on the saved biLM"
        )


def read_part(path: Path) -> bytes:
    """The bytes of a saved part, or a SavedWeightsError naming it when it is missing or unreadable."""
    try:
        return path.read_bytes()
    except OSError as err:
        raise SavedWeightsError(f"{path} cannot be read ({err.strerror or err}): {SAVED_FIX}") from None


def replace_file(path: Path, data: bytes) -> None:
    """`path` holds `data` or, if writing is cut short, what it held before."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)


# The component's parts (`cfg`, `vocab`, `model`, `pooling`), written and read for spaCy's serialization.
# `component` is an ElmoComponent; its biLM is loaded first, so its bytes carry the weights.


def parts_to_bytes(component: Any, exclude: Iterable[str]) -> bytes:
    ensure_loaded(component.model)
    fields: Dict[str, Callable[[], bytes]] = {
        "cfg": lambda: srsly.json_dumps(component.cfg),
        "vocab": lambda: component.vocab.to_bytes(exclude=exclude),
        "model": lambda: model_bytes(component.model),
        "pooling": lambda: model_bytes(component.pooling),
    }
    return to_bytes(fields, exclude)


def parts_to_disk(component: Any, path: Any, exclude: Iterable[str]) -> None:
    ensure_loaded(component.model)
    fields: Dict[str, Callable[[Path], Any]] = {
        "cfg": lambda p: replace_file(p, (srsly.json_dumps(component.cfg, indent=2) + "\n").encode("utf8")),
        "vocab": lambda p: component.vocab.to_disk(p, exclude=exclude),
        "model": lambda p: replace_file(p, model_bytes(component.model)),
        "pooling": lambda p: replace_file(p, model_bytes(component.pooling)),
    }
    to_disk(path, fields, exclude)


def parts_from_bytes(component: Any, data: bytes, exclude: Iterable[str]) -> None:
    fields: Dict[str, Callable[[bytes], Any]] = {
        "vocab": lambda b: component.vocab.from_bytes(b, exclude=exclude),
        "model": lambda b: load_model_bytes(component.model, b),
        "pooling": lambda b: load_pooling_bytes(component.pooling, b),
    }
    from_bytes(data, fields, exclude)


def parts_from_disk(component: Any, path: Any, exclude: Iterable[str]) -> None:
    """Each saved part read from its file; a part that is refused is named by its file (`<pipeline>/elmo/model`)."""
    fields: Dict[str, Callable[[Path], Any]] = {
        "vocab": lambda p: component.vocab.from_disk(p, exclude=exclude),
        "model": lambda p: _named(p, lambda data: load_model_bytes(component.model, data)),
        "pooling": lambda p: _named(p, lambda data: load_pooling_bytes(component.pooling, data)),
    }
    from_disk(path, fields, exclude)


def _named(path: Path, load: Callable[[bytes], None]) -> None:
    """`load` the part saved at `path`; its error, if any, names the file."""
    try:
        load(read_part(path))
    except ElmoError as err:
        message = str(err) if str(path) in str(err) else f"{path}: {err}"
        raise type(err)(message) from None
