"""Reading and writing the `elmo` component's saved parts: the model's bytes (the biLM and its pooling
node) and each file replaced whole.

The model's bytes hold the biLM and the pooling's parameters. The settings stay the config's (thinc would
write the saved attrs over them), and a saved pooling of another kind than the config builds is not read:
the config's is used as it builds.
"""

from __future__ import annotations

from pathlib import Path

import srsly
from thinc.api import Model

from ..elmo.util.io import atomic_output


def load_model_bytes(model: Model, pooling: Model, data: bytes) -> None:
    """`model` (the biLM layer's, `pooling` its node) from `data`: the pooling's parameters where the
    saved pooling has the same layers, its attrs kept as configured; else the biLM's alone."""
    msg = srsly.msgpack_loads(data)
    configured = [dict(node.attrs) for node in pooling.walk()]
    if [node["name"] for node in msg["nodes"]] == [node.name for node in model.walk()]:
        model.from_bytes(data)
    else:
        carried = model.layers[1:]
        model.layers[1:] = []
        try:
            n_nodes = len(list(model.walk()))
            model.from_dict({key: msg[key][:n_nodes] for key in ("nodes", "attrs", "params", "shims")})
        finally:
            model.layers[1:] = carried
    for node, attrs in zip(pooling.walk(), configured):
        node.attrs.clear()
        node.attrs.update(attrs)


def replace_file(path: Path, data: bytes) -> None:
    """`path` holds `data` or, if writing is cut short, what it held before."""
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)
