"""The layers of an `elmo` component's saved `model` bytes, opened, changed and closed again, as a crafted
or damaged file would hold them: the digest's wrapper (saved_model.py), thinc's model, its PyTorch shim,
the biLM's holder message (bilm_holder.serialize_holder's)."""

import hashlib
from typing import Any, Callable, Dict

import srsly


def thinc_bytes(model_file: bytes) -> bytes:
    """thinc's bytes inside `model_file`: what a pipeline saved before the digest holds."""
    return srsly.msgpack_loads(model_file)["model"]


def with_digest(data: bytes) -> bytes:
    """thinc's bytes `data` with their digest, as the component saves them."""
    return srsly.msgpack_dumps({"model": data, "sha256": hashlib.sha256(data).hexdigest()})


def with_holder_changed(model_file: bytes, change: Callable[[Dict[str, Any]], None]) -> bytes:
    """`model_file` with the biLM's holder message changed in place by `change`, the digest made again."""
    model = srsly.msgpack_loads(thinc_bytes(model_file))
    shims = next(shims for shims in model["shims"] if shims)
    shim = srsly.msgpack_loads(shims[0])
    holder = srsly.msgpack_loads(shim["state"])
    change(holder)
    shim["state"] = srsly.msgpack_dumps(holder)
    shims[0] = srsly.msgpack_dumps(shim)
    return with_digest(srsly.msgpack_dumps(model))


def holder_of(model_file: bytes) -> Dict[str, Any]:
    """The biLM's holder message in `model_file`."""
    found = []
    with_holder_changed(model_file, found.append)
    return found[0]
