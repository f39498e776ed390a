"""Token/Span/Doc `vector`, `has_vector`, `vector_norm` and `similarity` from `doc._.elmo["vectors"]`.

spaCy consults a doc's user hooks before its own vectors, so these take precedence over static vectors
and `doc.tensor`. Whitespace tokens have no vector (zeros, `has_vector` False) and are left out of span
and doc means. Hooks are functions and `Doc.to_bytes` drops them (spaCy warning W109), while the data in
`doc._.elmo` survives. Reading bytes (`Doc.from_bytes`, `DocBin.get_docs`, `nlp.pipe(n_process=...)`)
runs no code of an extension, and `token.vector` reads only the hooks, the vocab's vectors and
`doc.tensor`, so nothing can put the hooks back before the first `token.vector`; they come back at the
first read of `doc._.elmo` (its getter installs them, and listeners read it), or with
`restore_vectors(docs)`. A worker of `nlp.pipe(n_process=...)` sends its docs back through
`Doc.to_bytes`, which keeps `doc.tensor`: there the vectors also go to an empty `doc.tensor`, which
`token.vector` reads while a vocab has no vectors of its own (`carry_through_bytes`), so the parent's
`token.vector` is ELMo's without a call. DocBin keeps no tensor. After a retokenization or `as_doc`
the rows are matched to the tokens by their characters (doc_data.py), so a vector is never another
token's.
"""

from __future__ import annotations

import multiprocessing
import warnings
from typing import Dict, Iterable, Optional, Union, cast

import numpy as np
from spacy.tokens import Doc, Span, Token

from ..elmo.errors import InputError
from .bilm_layer.read_tokens import read_by_bilm
from .doc_data import EXTENSION, get_doc_data, rows_match, stored_data

Obj = Union[Doc, Span, Token]


def _data(doc: Doc) -> Dict[str, np.ndarray]:
    data = stored_data(doc)
    if data is None:
        raise InputError("this doc has vector hooks but no doc._.elmo; run the elmo component on it again")
    return data


def _rows(doc: Doc, start: int, end: int) -> np.ndarray:
    """The vectors of tokens `start:end`: straight from the stored rows when those are still these tokens'
    (a token's vector checks only its own row), else from the data re-aligned to the tokens (doc_data.py)."""
    data = _data(doc)
    if not rows_match(data, doc, start, end):
        data = cast(Dict[str, np.ndarray], get_doc_data(doc))
    return data["vectors"]


def _token_vector(token: Token) -> np.ndarray:
    return _rows(token.doc, token.i, token.i + 1)[token.i]


def _mean(doc: Doc, start: int, end: int) -> np.ndarray:
    vectors = _rows(doc, start, end)
    real = [i for i in range(start, end) if read_by_bilm(doc[i])]
    if not real:
        return np.zeros(vectors.shape[1], dtype=np.float32)
    return vectors[real].mean(axis=0)


def _span_vector(span: Span) -> np.ndarray:
    return _mean(span.doc, span.start, span.end)


def _doc_vector(doc: Doc) -> np.ndarray:
    return _mean(doc, 0, len(doc))


def _norm(obj: Obj) -> float:
    return float(np.linalg.norm(np.asarray(obj.vector)))


def _has_vector(obj: Obj) -> bool:
    tokens = [obj] if isinstance(obj, Token) else obj
    return any(read_by_bilm(token) for token in tokens)


def _similarity(obj: Obj, other: Obj) -> float:
    """Cosine of the two vectors; 0.0 when either has none (spaCy's own convention)."""
    a, b = np.asarray(obj.vector), np.asarray(other.vector)
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return 0.0 if norm == 0.0 else float(np.dot(a, b) / norm)


def install_hooks(doc: Doc) -> None:
    """Make the doc's vectors and similarities use `doc._.elmo`; requires the data to be set."""
    doc.user_token_hooks.update(vector=_token_vector, has_vector=_has_vector, vector_norm=_norm, similarity=_similarity)
    # No span "vector_norm" hook: spaCy 3.8's Span.vector_norm calls the span's "vector" hook when one is
    # set, and without it computes the norm from Span.vector, which uses our hook.
    doc.user_span_hooks.update(vector=_span_vector, has_vector=_has_vector, similarity=_similarity)
    doc.user_hooks.update(vector=_doc_vector, has_vector=_has_vector, vector_norm=_norm, similarity=_similarity)


def read_doc_data(doc: Doc) -> Optional[Dict[str, np.ndarray]]:
    """`doc._.elmo` (doc_data.get_doc_data, checked against the doc), with the vector hooks put back
    on a doc that lost them in a bytes round trip; a `vector` hook of the user's own is left as it is."""
    data = get_doc_data(doc)
    if data is not None and "vector" not in doc.user_token_hooks:
        install_hooks(doc)
    return data


def ensure_extension() -> None:
    if not Doc.has_extension(EXTENSION):
        Doc.set_extension(EXTENSION, getter=read_doc_data)


def carry_through_bytes(doc: Doc, vectors: np.ndarray) -> None:
    """In a worker process, `vectors` also go to the doc's tensor when it is empty (no tok2vec wrote
    it), so that `token.vector` is ELMo's in the parent that reads the doc's bytes (module docstring).
    A vocab with vectors of its own would answer `token.vector` there instead: said (once a process, as
    Python shows a warning)."""
    if multiprocessing.parent_process() is None or doc.tensor.size:
        return
    doc.tensor = vectors
    if doc.vocab.vectors.size:
        warnings.warn(
            "after nlp.pipe(n_process>1), token.vector is the vocab's static vector, not ELMo's, until "
            "spacy_elmo.restore_vectors(docs) or the first read of doc._.elmo: call it on the docs",
            stacklevel=2,
        )


def restore_vectors(docs: Iterable[Doc]) -> int:
    """Re-install the vector hooks on docs that carry ELMo data but lost their hooks in a bytes round
    trip, after checking the data fits the doc (`DocDataError`). Returns how
    many docs got them; docs without ELMo data are left as they are, and a warning says how many
    there were and why (a DocBin written without `store_user_data=True` keeps no user data)."""
    ensure_extension()
    count = total = 0
    for doc in docs:
        total += 1
        if get_doc_data(doc) is not None:
            install_hooks(doc)
            count += 1
    if count < total:
        warnings.warn(
            f"restore_vectors: {total - count} of {total} docs carry no doc._.elmo, so they keep no ELMo "
            "vectors: a DocBin keeps user data only when written with DocBin(store_user_data=True); run "
            "the pipeline on those docs again, or save them so",
            stacklevel=2,
        )
    return count
