"""What the `elmo` component leaves on a Doc: `doc._.elmo`, a dict of plain numpy arrays.

Plain arrays because `Doc.to_bytes`, `DocBin(store_user_data=True)` and `nlp.pipe(n_process=...)` keep
user data through srsly's msgpack, which handles numpy but would need a registered codec (missing in a
process that never imported spacy_elmo) for a custom class.

- `"vectors"` `[n_tokens, 2P]` float32: the pooled vector of each token (zeros for whitespace tokens).
- `"layers"` `[L+1, n_tokens, 2P]` float32: every biLM layer, when the component keeps them (listeners
  read these).
- `"offsets"` `[n_tokens, 2]` int64: each token's start and end character when the rows were computed.

Stored in `doc.user_data` under the key of an extension value that starts at character 0, not under a
doc-level key: `Doc.from_docs` keeps such values (shifting them by each doc's character offset) where
it drops doc-level ones (spaCy's warning W101), so a merged doc keeps every part's data and
`doc._.elmo` joins them in order; `Span.as_doc(copy_user_data=True)` shifts the key the same way.

The rows follow the tokens by their characters, since spaCy's retokenizer (`merge_entities`,
`merge_noun_chunks`, `doc.retokenize()`) changes the tokens but neither the text nor the user data.
When the stored offsets no longer match the doc's tokens, the rows are re-aligned once (and stored
so): a token that is one stored token keeps its row; a token inside one stored token (a split piece)
gets that token's row; a token made of whole stored tokens (a merge) gets the mean of their rows,
leaving out whitespace tokens; rows of characters outside the doc (the rest of the parent doc after
`as_doc`) are dropped. A token that cuts through a stored token otherwise raises `MisalignedDataError`:
its row would be another token's.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from spacy.attrs import IDX, LENGTH
from spacy.tokens import Doc

from .errors import MisalignedDataError

EXTENSION = "elmo"


def _key(start_char: int) -> Tuple[str, str, int, None]:
    return ("._.", EXTENSION, start_char, None)


def _parts(doc: Doc) -> List[Tuple[int, Dict[str, np.ndarray]]]:
    user_data: Dict[Any, Any] = doc.user_data
    return sorted(
        ((key[2], value) for key, value in user_data.items() if _is_part_key(key)),
        key=lambda part: part[0],
    )


def _is_part_key(key: Any) -> bool:
    return isinstance(key, tuple) and len(key) == 4 and key[:2] == ("._.", EXTENSION) and isinstance(key[2], int)


def ensure_extension() -> None:
    if not Doc.has_extension(EXTENSION):
        Doc.set_extension(EXTENSION, getter=get_doc_data)


def token_offsets(doc: Doc) -> np.ndarray:
    """`[n_tokens, 2]` int64: each token's start and end character."""
    if not len(doc):
        return np.zeros((0, 2), dtype=np.int64)
    array = doc.to_array([IDX, LENGTH]).astype(np.int64)
    return np.stack([array[:, 0], array[:, 0] + array[:, 1]], axis=1)


def set_doc_data(doc: Doc, vectors: np.ndarray, layers: Optional[np.ndarray]) -> None:
    """Store the rows of `doc`'s current tokens."""
    _store(doc, vectors, layers, token_offsets(doc))


def _store(doc: Doc, vectors: np.ndarray, layers: Optional[np.ndarray], offsets: np.ndarray) -> Dict[str, np.ndarray]:
    data: Dict[str, np.ndarray] = {
        "vectors": np.ascontiguousarray(vectors, dtype=np.float32),
        "offsets": np.ascontiguousarray(offsets, dtype=np.int64),
    }
    if layers is not None:
        data["layers"] = np.ascontiguousarray(layers, dtype=np.float32)
    user_data: Dict[Any, Any] = doc.user_data
    for key in [key for key in user_data if _is_part_key(key)]:
        del user_data[key]
    user_data[_key(0)] = data
    return data


def stored_data(doc: Doc) -> Optional[Dict[str, np.ndarray]]:
    """The stored rows with `"offsets"` in this doc's characters, as computed (not re-aligned): several
    parts (`Doc.from_docs`) or a shifted one (`as_doc`) are joined and stored under key 0 once."""
    parts = _parts(doc)
    if not parts:
        return None
    if len(parts) == 1 and parts[0][0] == 0 and "offsets" in parts[0][1]:
        return parts[0][1]
    datas = [data for _, data in parts]
    if any("offsets" not in data for data in datas):
        return _legacy(doc, datas)
    offsets = np.concatenate([data["offsets"] + start for start, data in parts])
    layers = np.concatenate([d["layers"] for d in datas], axis=1) if all("layers" in d for d in datas) else None
    return _store(doc, np.concatenate([d["vectors"] for d in datas]), layers, offsets)


def _legacy(doc: Doc, datas: List[Dict[str, np.ndarray]]) -> Dict[str, np.ndarray]:
    """Data saved without offsets (spacy-elmo before they were stored): its rows are taken to be the
    doc's tokens when their number matches, which is all that can be checked."""
    vectors = np.concatenate([d["vectors"] for d in datas])
    if len(vectors) != len(doc):
        raise MisalignedDataError(
            f"doc._.elmo has {len(vectors)} token rows (saved without token offsets, by an older spacy-elmo) "
            f"but the doc has {len(doc)} tokens; run the elmo component on the doc again"
        )
    layers = np.concatenate([d["layers"] for d in datas], axis=1) if all("layers" in d for d in datas) else None
    return _store(doc, vectors, layers, token_offsets(doc))


def rows_match(data: Dict[str, np.ndarray], doc: Doc, start: int, end: int) -> bool:
    """Whether the stored rows `start:end` are those of the doc's tokens `start:end` (cheap: a token's
    vector checks only its own row)."""
    offsets = data["offsets"]
    if end > len(offsets):
        return False
    for i in range(start, end):
        token = doc[i]
        if offsets[i, 0] != token.idx or offsets[i, 1] != token.idx + len(token):
            return False
    return True


def get_doc_data(doc: Doc) -> Optional[Dict[str, np.ndarray]]:
    """The doc's data, one row per current token (re-aligned and stored so when the tokens changed)."""
    data = stored_data(doc)
    if data is None:
        return None
    current = token_offsets(doc)
    if np.array_equal(data["offsets"], current):
        return data
    return _realign(doc, data, current)


def _realign(doc: Doc, data: Dict[str, np.ndarray], current: np.ndarray) -> Dict[str, np.ndarray]:
    starts, ends = data["offsets"][:, 0], data["offsets"][:, 1]
    text = doc.text
    sources: List[List[int]] = []
    for i, (start, end) in enumerate(current.tolist()):
        # The stored token that starts at or before this one: it holds this token whole (kept or split)?
        holder = int(np.searchsorted(starts, start, side="right")) - 1
        if holder >= 0 and ends[holder] >= end:
            sources.append([holder])
            continue
        # Else whole stored tokens, from this token's first character to its last (a merge).
        first = int(np.searchsorted(starts, start, side="left"))
        last = int(np.searchsorted(ends, end, side="right"))
        if first >= last or starts[first] != start or ends[last - 1] != end:
            raise MisalignedDataError(
                f"token {i} ({doc[i].text!r}, characters {start}-{end}) does not line up with the tokens "
                "the elmo component saw (it is neither one of them, nor inside one, nor made of whole "
                "ones), so no row of doc._.elmo belongs to it; run the elmo component on the doc again"
            )
        parts = list(range(first, last))
        sources.append([j for j in parts if not text[starts[j] : ends[j]].isspace()] or parts)
    vectors = np.stack([data["vectors"][rows].mean(axis=0) for rows in sources]) if sources else data["vectors"][:0]
    layers = data.get("layers")
    if layers is not None:
        layers = np.stack([layers[:, rows].mean(axis=1) for rows in sources], axis=1) if sources else layers[:, :0]
    return _store(doc, vectors, layers, current)


def get_layers(doc: Doc) -> Optional[np.ndarray]:
    """The layers stored for the doc's current tokens (listeners read them), or None."""
    data = get_doc_data(doc)
    return None if data is None else data.get("layers")
