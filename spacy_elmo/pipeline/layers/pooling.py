"""Fixed pooling of the biLM's layers into one vector per token: what `token.vector` and `doc.tensor` are.

`List[Floats3d] -> List[Floats2d]`, like the trainable ScalarMix, so that the `elmo` component's
`pooling` is any such layer: this one (`spacy-elmo.Pooling.v1`: "mean", "top" or fixed weights per
layer), a ScalarMix with `trainable = false` (softmax-normalised weights and gamma), or your own. The
strings and lists the component accepts are shorthands for this layer.
"""

from __future__ import annotations

from typing import Any, Callable, List, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from ...elmo.nn.pooling_weights import PoolingWeights, check_pooling, pooling_weights
from .read_rows import ROW_WISE


def build_pooling_v1(weights: PoolingWeights = "mean") -> Model[List[Floats3d], List[Floats2d]]:
    """`spacy-elmo.Pooling.v1`: fixed pooling of the biLM's layers: what `token.vector` and `doc.tensor` are.

    weights (Union[str, Sequence[float]]): "mean", "top" (the last LSTM layer) or one number per layer,
        token layer first (not normalised).
    RETURNS (Model[List[Floats3d], List[Floats2d]]): each doc's layers -> one vector per token.
    """
    check_pooling(weights)
    attrs = {"weights": weights if isinstance(weights, str) else list(weights), ROW_WISE: True}
    return Model("elmo-pooling", _forward, attrs=attrs)


def _forward(model: Model, Xs: List[Floats3d], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    if not Xs:
        return [], lambda dYs: []
    xp = model.ops.xp
    weights: Any = xp.asarray(pooling_weights(model.attrs["weights"], Xs[0].shape[0]))
    Ys = [xp.tensordot(weights, X, axes=1).astype(np.float32, copy=False) for X in Xs]

    def backprop(dYs: List[Floats2d]) -> List[Floats3d]:
        return [weights.reshape((-1, 1, 1)) * dY.reshape((1, *dY.shape)) for dY in dYs]

    return Ys, backprop
