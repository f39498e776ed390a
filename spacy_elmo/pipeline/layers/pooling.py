"""Fixed pooling of the biLM's layers into one vector per token: what `token.vector` and `doc.tensor` are.

`List[Floats3d] -> List[Floats2d]`, like the trainable ScalarMix, so that the `elmo` component's
`pooling` is any such layer: this one (`spacy-elmo.Pooling.v1`: "mean", "top" or fixed weights per
layer), a ScalarMix with `trainable = false` (softmax-normalised weights and gamma), or your own. The
strings and lists the component accepts are shorthands for this layer.
"""

from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple, Union

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from ...errors import ElmoError
from .read_rows import ROW_WISE

PoolingWeights = Union[str, Sequence[float]]
SHORTHANDS = ("mean", "top")


def check_pooling(weights: PoolingWeights) -> None:
    """The shape of the setting, checked when the config is built."""
    if isinstance(weights, str):
        if weights not in SHORTHANDS:
            raise ElmoError(f"pooling {weights!r} is not one of {', '.join(SHORTHANDS)} or a list of layer weights")
    elif not weights or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights):
        raise ElmoError(f"pooling must be 'mean', 'top' or a non-empty list of layer weights, got {weights!r}")


def pooling_weights(weights: PoolingWeights, n_layers: int) -> np.ndarray:
    """The fixed weights `[L+1]` (token layer first) that turn a doc's layers into its token vectors."""
    if weights == "mean":
        return np.full(n_layers, 1.0 / n_layers, dtype=np.float32)
    if weights == "top":
        return np.eye(n_layers, dtype=np.float32)[-1]
    if len(weights) != n_layers:
        raise ElmoError(
            f"pooling has {len(weights)} weights but the biLM has {n_layers} layers; "
            f"give one weight per layer (token layer first)"
        )
    return np.asarray(weights, dtype=np.float32)


def pooling_layer(weights: PoolingWeights = "mean") -> Model[List[Floats3d], List[Floats2d]]:
    """`spacy-elmo.Pooling.v1`: each doc's `[L+1, n, D]` layers -> `[n, D]` with fixed `weights`: "mean",
    "top" (the last LSTM layer) or one number per layer, token layer first (not normalised)."""
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
