"""A batch of docs annotated piece by piece: each piece of layers the biLM gives is pooled and stored as
its batch is done, so that a long doc's float32 layers are never whole in memory beside the stored copy
(float16 with the default `store_layers`). The component uses it where the pooling works row by row."""

from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np
from numpy.typing import DTypeLike
from spacy.tokens import Doc
from thinc.api import Model

from .bilm_layer.thinc_bilm import ensure_loaded, predict_pieces
from .doc_data import as_layer_dtype


def pooled_by_piece(
    model: Model, pooling: Model, docs: List[Doc], dtype: Optional[DTypeLike]
) -> List[Tuple[np.ndarray, Optional[np.ndarray]]]:
    """Per doc, its pooled vectors (float32) and, unless `dtype` is None, its layers stored as `dtype`."""
    bilm = ensure_loaded(model)
    vectors = [np.zeros((len(doc), bilm.output_dim), dtype=np.float32) for doc in docs]
    layers: List[Optional[np.ndarray]] = [
        None if dtype is None else np.zeros((bilm.n_layers, len(doc), bilm.output_dim), dtype) for doc in docs
    ]
    for d, rows, piece in predict_pieces(model, docs):
        vectors[d][rows] = pooling.predict([piece])[0]
        doc_layers = layers[d]
        if doc_layers is not None:
            doc_layers[:, rows] = as_layer_dtype(piece, doc_layers.dtype.type)
    return list(zip(vectors, layers))
