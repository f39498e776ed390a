"""The projection of `[features; ELMo]` to a head's width: thinc's `Linear`, with its three matrix products
done by the array module's own `matmul`.

Why not thinc's `Linear`: on a CPU thinc multiplies through its bundled BLIS, NumPy through its BLAS, and
for this layer's shapes (a few hundred rows, 352 -> 96, the widest matrix of an ELMo head) NumPy's BLAS
is the faster, by enough to show in a training step. On a GPU the module is CuPy and both are cuBLAS.

Same node name, dimensions, parameter names and initialisation (glorot-uniform W, zero b, drawn in the same
order) as thinc's `Linear`: pipelines saved with it load, and a seed gives the same initial weights.
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Tuple, cast

from thinc.api import Model, glorot_uniform_init, zero_init
from thinc.layers.linear import init as linear_init
from thinc.types import Floats1d, Floats2d

from ...elmo.errors import InputError


def projection(nO: int) -> Model[Floats2d, Floats2d]:
    if nO < 1:
        raise InputError(f"width must be a positive number of features, got {nO}")
    # thinc's own Linear initialisation, with Linear's defaults.
    init = partial(linear_init, glorot_uniform_init, zero_init)
    return Model("linear", _forward, init=init, dims={"nO": nO, "nI": None}, params={"W": None, "b": None})


def _forward(model: Model, X: Floats2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    xp = model.ops.xp
    W = cast(Floats2d, model.get_param("W"))
    b = cast(Floats1d, model.get_param("b"))
    if X.shape[1] != W.shape[1]:
        raise InputError(
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
