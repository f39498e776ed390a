"""What the `elmo` component leaves on a Doc: `doc._.elmo`, a dict of plain numpy arrays.

Plain arrays because `Doc.to_bytes`, `DocBin(store_user_data=True)` and `nlp.pipe(n_process=...)` keep
user data through srsly's msgpack, which handles numpy but would need a registered codec (missing in a
process that never imported spacy_elmo) for a custom class.

- `"vectors"` `[n_tokens, 2P]` float32: the pooled vector of each token (zeros for whitespace tokens).
- `"layers"` `[L+1, n_tokens, 2P]`: every biLM layer, when the component keeps them (listeners read
  these): float16 by default, float32 with `store_layers = true`.
- `"offsets"` `[n_tokens, 2]` int64: each token's start and end character when the rows were computed.

Stored in `doc.user_data` under the key of an extension value that starts at character 0, not under a
doc-level key: `Doc.from_docs` keeps such values (shifting them by each doc's character offset) where
it drops doc-level ones (spaCy's warning W101), so a merged doc keeps every part's data and
`doc._.elmo` joins them in order; `Span.as_doc(copy_user_data=True)` shifts the key the same way.

The rows follow the tokens by their characters, since spaCy's retokenizer (`merge_entities`,
`merge_noun_chunks`, `doc.retokenize()`) changes the tokens but neither the text nor the user data.
Data that is not what the component writes (other keys, dtypes or shapes, rows for another doc, parts
of different widths) raises `DocDataError` when it is read, never an IndexError deep inside numpy.
When the stored offsets no longer match the doc's tokens, the rows are re-aligned once (and stored
so): a token that is one stored token keeps its row; a token inside one stored token (a split piece)
gets that token's row; a token made of whole stored tokens (a merge) gets the mean of their rows,
leaving out whitespace tokens; rows of characters outside the doc (the rest of the parent doc after
`as_doc`) are dropped. A token that cuts through a stored token otherwise raises `DocDataError`:
its row would be another token's.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import torch
from spacy.attrs import IDX, LENGTH
from spacy.tokens import Doc

from ..elmo.errors import InputError
from .errors import DocDataError

EXTENSION = "elmo"

# `store_layers`: the dtype the layers are kept in, or None for none. float16 halves what a doc carries
# through DocBin and `nlp.pipe(n_process=...)`; the vectors stay float32 (token.vector is exact).
LAYER_DTYPES: Dict[Union[bool, str], Optional[type]] = {"float16": np.float16, True: np.float32, False: None}
FIX = "run the elmo component on the doc again"


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


def layer_dtype(store_layers: Any) -> Optional[type]:
    """The dtype `store_layers` keeps the layers in (None: no layers); any other value is refused."""
    if isinstance(store_layers, (bool, str)) and store_layers in LAYER_DTYPES:
        return LAYER_DTYPES[store_layers]
    raise InputError(
        f'store_layers is {store_layers!r}: it is "float16" (the layers in half precision), true (float32) '
        "or false (only the pooled vectors)"
    )


def as_layer_dtype(layers: np.ndarray, dtype: type) -> np.ndarray:
    """`layers` (host floats) in `dtype`, rounded to nearest even as numpy rounds, bit for bit. float32 to
    float16 goes through torch, whose conversion runs on the CPU's vector units where numpy's converts
    value by value: beside the biLM, numpy's cast was the largest cost of `nlp.pipe` (an array torch
    cannot view, read-only or reversed, takes numpy's way)."""
    if dtype is np.float16 and layers.dtype == np.float32 and layers.flags.writeable and min(layers.strides) >= 0:
        return torch.from_numpy(layers).to(torch.float16).numpy()
    return layers.astype(dtype, copy=False)


def token_offsets(doc: Doc) -> np.ndarray:
    """`[n_tokens, 2]` int64: each token's start and end character."""
    if not len(doc):
        return np.zeros((0, 2), dtype=np.int64)
    array = doc.to_array([IDX, LENGTH]).astype(np.int64)
    return np.stack([array[:, 0], array[:, 0] + array[:, 1]], axis=1)


def set_doc_data(doc: Doc, vectors: np.ndarray, layers: Optional[np.ndarray]) -> None:
    """Store the rows of `doc`'s current tokens; the layers keep their dtype (float16 or float32)."""
    _store(doc, vectors, layers, token_offsets(doc))


def _store(doc: Doc, vectors: np.ndarray, layers: Optional[np.ndarray], offsets: np.ndarray) -> Dict[str, np.ndarray]:
    data: Dict[str, np.ndarray] = {
        "vectors": np.ascontiguousarray(vectors, dtype=np.float32),
        "offsets": np.ascontiguousarray(offsets, dtype=np.int64),
    }
    if layers is not None:
        dtype = np.float16 if layers.dtype == np.float16 else np.float32
        data["layers"] = np.ascontiguousarray(layers, dtype=dtype)
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
    for _, data in parts:
        check_structure(doc, data)
    if len(parts) == 1 and parts[0][0] == 0:
        return parts[0][1]
    datas = [data for _, data in parts]
    _check_same_widths(doc, datas)
    offsets = np.concatenate([data["offsets"] + start for start, data in parts])
    layers = np.concatenate([d["layers"] for d in datas], axis=1) if all("layers" in d for d in datas) else None
    return _store(doc, np.concatenate([d["vectors"] for d in datas]), layers, offsets)


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
    _check_offsets(doc, data["offsets"])
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
            raise DocDataError(
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


def describe(doc: Doc) -> str:
    """The doc, for an error message: its first words and length."""
    text = doc.text if len(doc.text) <= 40 else doc.text[:40] + "..."
    return f"the doc {text!r} ({len(doc)} tokens)"


def _is_float(value: Any, ndim: int) -> bool:
    return isinstance(value, np.ndarray) and value.ndim == ndim and value.dtype.kind == "f"


def check_structure(doc: Doc, data: Any) -> None:
    """`data` is what the component writes: a dict of `vectors` (float, `[n, width]`), `offsets` (integer,
    `[n, 2]`) and optionally `layers` (float, `[L+1, n, width]`); cheap (no pass over the rows,
    and the doc described only in an error), as it runs for every read, a token's vector included."""
    problem = _structure_problem(data)
    if problem is not None:
        raise DocDataError(f"doc._.elmo of {describe(doc)}{problem}; {FIX}")


def _structure_problem(data: Any) -> Optional[str]:
    """What is wrong with `data`'s structure, as the rest of check_structure's message; None if nothing."""
    if not isinstance(data, dict) or "vectors" not in data or "offsets" not in data:
        keys = sorted(map(str, data)) if isinstance(data, dict) else type(data).__name__
        return f" is not the elmo component's data (a dict with 'vectors' and 'offsets'; got {keys})"
    vectors, offsets, layers = data["vectors"], data["offsets"], data.get("layers")
    if not _is_float(vectors, 2):
        return f": 'vectors' is {_shape(vectors)}, not a float array [tokens, width]"
    if not (isinstance(offsets, np.ndarray) and offsets.dtype.kind in "iu" and offsets.shape == (len(vectors), 2)):
        return (
            f": 'offsets' is {_shape(offsets)}, not an integer array of {len(vectors)} rows (one a "
            "vector) of 2 characters"
        )
    if layers is not None and not (_is_float(layers, 3) and layers.shape[1:] == vectors.shape):
        return (
            f": 'layers' is {_shape(layers)}, not a float array [layers, {len(vectors)}, "
            f"{vectors.shape[1]}] as its vectors"
        )
    return None


def _shape(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {list(value.shape)}"
    return f"a {type(value).__name__}"


def _check_same_widths(doc: Doc, datas: List[Dict[str, np.ndarray]]) -> None:
    widths = sorted({data["vectors"].shape[1] for data in datas})
    if len(widths) > 1:
        raise DocDataError(
            f"doc._.elmo of {describe(doc)} joins parts of widths {widths} (docs from different biLMs merged "
            f"with Doc.from_docs); {FIX}"
        )


def _check_offsets(doc: Doc, offsets: np.ndarray) -> None:
    """Offsets that re-aligning can search: tokens in order, none overlapping (rows outside the doc's
    characters, the rest of a parent doc after `as_doc`, are dropped there)."""
    starts, ends = offsets[:, 0], offsets[:, 1]
    if np.any(starts > ends) or np.any(starts[1:] < ends[:-1]):
        raise DocDataError(
            f"doc._.elmo of {describe(doc)} has token offsets out of order or overlapping (not what the elmo "
            f"component writes); {FIX}"
        )


def check_width(doc: Doc, layers: np.ndarray, n_layers: Optional[int], width: Optional[int], owner: str) -> None:
    """`layers` read off `doc` have the `n_layers` and `width` of the component `owner` (None: unknown)."""
    if (n_layers is not None and layers.shape[0] != n_layers) or (width is not None and layers.shape[2] != width):
        raise DocDataError(
            f"doc._.elmo of {describe(doc)} holds {layers.shape[0]} layers of width {layers.shape[2]}, but the "
            f"{owner!r} component's biLM gives {n_layers} of width {width} (data of another model?); {FIX}"
        )
