"""What the `elmo` component leaves on a Doc: `doc._.elmo`, a dict of plain float32 numpy arrays.

Plain arrays because `Doc.to_bytes`, `DocBin(store_user_data=True)` and `nlp.pipe(n_process=...)` keep
user data through srsly's msgpack, which handles numpy but would need a registered codec (missing in a
process that never imported spacy_elmo) for a custom class.

- `"vectors"` `[n_tokens, 2P]`: the pooled vector of each token (zeros for whitespace tokens).
- `"layers"` `[L+1, n_tokens, 2P]`: every biLM layer, when the component keeps them (listeners read these).
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np
from spacy.tokens import Doc

EXTENSION = "elmo"


def ensure_extension() -> None:
    if not Doc.has_extension(EXTENSION):
        Doc.set_extension(EXTENSION, default=None)


def set_doc_data(doc: Doc, vectors: np.ndarray, layers: Optional[np.ndarray]) -> None:
    data: Dict[str, np.ndarray] = {"vectors": np.ascontiguousarray(vectors, dtype=np.float32)}
    if layers is not None:
        data["layers"] = np.ascontiguousarray(layers, dtype=np.float32)
    doc.user_data[("._.", EXTENSION, None, None)] = data


def get_doc_data(doc: Doc) -> Optional[Dict[str, np.ndarray]]:
    return doc.user_data.get(("._.", EXTENSION, None, None))


def get_vectors(doc: Doc) -> Optional[np.ndarray]:
    data = get_doc_data(doc)
    return None if data is None else data["vectors"]


def get_layers(doc: Doc) -> Optional[np.ndarray]:
    data = get_doc_data(doc)
    return None if data is None else data.get("layers")
