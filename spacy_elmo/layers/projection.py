"""The projection of `[features; ELMo]` to a head's width: thinc's `Linear`, with its three matrix products
done by the array module's own `matmul`.

Why not thinc's `Linear`: on a CPU thinc multiplies through its bundled BLIS, NumPy through its BLAS. For
this layer's shapes (a few hundred rows, 352 -> 96, the widest matrix of an ELMo head) NumPy's BLAS ran
3x faster on an AMD EPYC (0.25 against 0.73 ms per product at 300 rows, one thread), which is about 1.7 ms
of a 300-word training step. On a GPU the module is CuPy and both are cuBLAS.

Same node name, dimensions, parameter names and initialisation (glorot-uniform W, zero b, drawn in the same
order) as thinc's `Linear`: pipelines saved with it load, and a seed gives the same initial weights.
"""

from __future__ import annotations

from typing import Callable, Optional, Tuple, cast

from thinc.api import Model, glorot_uniform_init, zero_init
from thinc.types import Floats1d, Floats2d
from thinc.util import get_width

from ..errors import ElmoError


def projection(nO: int) -> Model[Floats2d, Floats2d]:
    if nO < 1:
        raise ElmoError(f"width must be a positive number of features, got {nO}")
    return Model("linear", _forward, init=_init, dims={"nO": nO, "nI": None}, params={"W": None, "b": None})


def _init(model: Model, X: Optional[Floats2d] = None, Y: Optional[Floats2d] = None) -> None:
    if X is not None:
        model.set_dim("nI", get_width(X))
    if Y is not None:
        model.set_dim("nO", get_width(Y))
    model.set_param("W", glorot_uniform_init(model.ops, (model.get_dim("nO"), model.get_dim("nI"))))
    model.set_param("b", zero_init(model.ops, (model.get_dim("nO"),)))


def _forward(model: Model, X: Floats2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    xp = model.ops.xp
    W = cast(Floats2d, model.get_param("W"))
    b = cast(Floats1d, model.get_param("b"))
    if X.shape[1] != W.shape[1]:
        raise ElmoError(
            f"the projection expects {W.shape[1]} input features and got {X.shape[1]}: the head's features "
            "changed width since it was initialized (a different biLM or extra_features); initialize it again"
        )
    Y = xp.matmul(X, W.T)
    Y += b

    def backprop(dY: Floats2d) -> Floats2d:
        model.inc_grad("W", xp.matmul(dY.T, X))
        model.inc_grad("b", dY.sum(axis=0))
        return xp.matmul(dY, W)

    return Y, backprop
