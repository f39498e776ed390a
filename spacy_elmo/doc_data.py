"""What the `elmo` component leaves on a Doc: `doc._.elmo`, a dict of plain float32 numpy arrays.

Plain arrays because `Doc.to_bytes`, `DocBin(store_user_data=True)` and `nlp.pipe(n_process=...)` keep
user data through srsly's msgpack, which handles numpy but would need a registered codec (missing in a
process that never imported spacy_elmo) for a custom class.

- `"vectors"` `[n_tokens, 2P]`: the pooled vector of each token (zeros for whitespace tokens).
- `"layers"` `[L+1, n_tokens, 2P]`: every biLM layer, when the component keeps them (listeners read these).

Stored in `doc.user_data` under the key of an extension value that starts at character 0, not under a
doc-level key: `Doc.from_docs` keeps such values (shifting them by each doc's character offset) where
it drops doc-level ones (spaCy's warning W101), so a merged doc keeps every part's data and
`doc._.elmo` joins them in order.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from spacy.tokens import Doc

EXTENSION = "elmo"


def _key(start_char: int) -> Tuple[str, str, int, None]:
    return ("._.", EXTENSION, start_char, None)


def _parts(doc: Doc) -> List[Tuple[int, Dict[str, np.ndarray]]]:
    user_data: Dict[Any, Any] = doc.user_data
    return sorted(
        (key[2], value)
        for key, value in user_data.items()
        if isinstance(key, tuple) and len(key) == 4 and key[:2] == ("._.", EXTENSION) and isinstance(key[2], int)
    )


def ensure_extension() -> None:
    if not Doc.has_extension(EXTENSION):
        Doc.set_extension(EXTENSION, getter=get_doc_data)


def set_doc_data(doc: Doc, vectors: np.ndarray, layers: Optional[np.ndarray]) -> None:
    data: Dict[str, np.ndarray] = {"vectors": np.ascontiguousarray(vectors, dtype=np.float32)}
    if layers is not None:
        data["layers"] = np.ascontiguousarray(layers, dtype=np.float32)
    user_data: Dict[Any, Any] = doc.user_data
    for start, _ in _parts(doc):
        del user_data[_key(start)]
    user_data[_key(0)] = data


def get_doc_data(doc: Doc) -> Optional[Dict[str, np.ndarray]]:
    """The doc's data; for a doc merged by `Doc.from_docs`, its parts' data joined in order (and stored
    joined, so that this happens once)."""
    parts = _parts(doc)
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0][1]
    datas = [data for _, data in parts]
    layers = np.concatenate([d["layers"] for d in datas], axis=1) if all("layers" in d for d in datas) else None
    set_doc_data(doc, np.concatenate([d["vectors"] for d in datas]), layers)
    return get_doc_data(doc)


def get_vectors(doc: Doc) -> Optional[np.ndarray]:
    data = get_doc_data(doc)
    return None if data is None else data["vectors"]


def get_layers(doc: Doc) -> Optional[np.ndarray]:
    data = get_doc_data(doc)
    return None if data is None else data.get("layers")
