"""Fixed weights per biLM layer, the rule behind every fixed pooling: "mean", "top" (the last LSTM layer)
or one number per layer, token layer first. NumPy only, so that the spaCy component's pooling layer
(pipeline/layers/pooling.py) and the Ray Data embedder (elmo/embed/ray_data.py) share one rule without the
embedder importing spaCy."""

from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from ..errors import InputError
from ..util.validation import non_finite_float32

PoolingWeights = Union[str, Sequence[float]]
SHORTHANDS = ("mean", "top")


def check_pooling(weights: PoolingWeights) -> None:
    """The shape of the setting, checked when the config is built."""
    if isinstance(weights, str):
        if weights not in SHORTHANDS:
            raise InputError(f"pooling {weights!r} is not one of {', '.join(SHORTHANDS)} or a list of layer weights")
    elif not isinstance(weights, (Sequence, np.ndarray)) or not all(_is_number(w) for w in weights) or not len(weights):
        raise InputError(f"pooling must be 'mean', 'top' or a non-empty list of layer weights, got {weights!r}")
    elif non_finite_float32(weights):
        raise InputError(
            f"pooling weights must be finite numbers within float32's range (+-3.4e38), got {weights!r}: the "
            "vectors would be inf or NaN"
        )


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def pooling_weights(weights: PoolingWeights, n_layers: int) -> np.ndarray:
    """The fixed weights `[L+1]` (token layer first) that turn a doc's layers into its token vectors."""
    if weights == "mean":
        return np.full(n_layers, 1.0 / n_layers, dtype=np.float32)
    if weights == "top":
        return np.eye(n_layers, dtype=np.float32)[-1]
    if len(weights) != n_layers:
        raise InputError(
            f"pooling has {len(weights)} weights but the biLM has {n_layers} layers; "
            f"give one weight per layer (token layer first)"
        )
    return np.asarray(weights, dtype=np.float32)
