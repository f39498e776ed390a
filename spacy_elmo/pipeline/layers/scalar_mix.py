"""The paper's task-specific layer mix (Eq. 1): `ELMo_k = gamma * sum_j softmax(w)_j * h_kj`.

`List[Floats3d] -> List[Floats2d]`: each doc's `[L+1, n, D]` becomes `[n, D]`. The optional layer norm
uses one mean and one variance per layer over all positions and features of the whole batch, as the
original does over its unpadded positions, so with it a doc's output depends on its batch. Every row it
is given counts as a token: the tok2vec gives it the rows of the tokens the biLM read and puts zeros
back for whitespace tokens (`read_rows.py`; without layer norm the mix is row-wise, sees every row and
its unread rows are zeroed). The L2 penalty on the raw weights `w` enters as its gradient `2 * l2 * w`,
like weight decay on these parameters only. The dropout is the mix's own (attr `mix_dropout`), so
spaCy's global `training.dropout` leaves it alone. `ScalarMix.v2` can start from a TF-Hub module's
trained mix (`start_from`), read when the mix is initialized (`nlp.initialize()`, which passes no
sample: the module's mix says how many layers), so a module without one fails there and not at the
first doc, and a saved pipeline, which carries the mix's parameters, never reads the module again.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d, Floats3d
from typing_extensions import Annotated

from ...elmo.errors import ElmoError, InputError
from ...elmo.util.validation import Float32, must_be, validate_arguments
from ..errors import for_spacy_commands
from .read_rows import ROW_WISE

InT = List[Floats3d]
OutT = List[Floats2d]

LAYER_NORM_EPS = 1e-12
MIX_NODE = "elmo-scalar-mix"  # the layer's name, by which reports find every mix inside a model
DropoutRate = Annotated[float, must_be("a number in [0, 1)", ge=0, lt=1)]
Penalty = Annotated[float, must_be("a finite number >= 0", ge=0)]


@validate_arguments("spacy-elmo.ScalarMix.v2")
def build_scalar_mix_v2(
    weights: Optional[Sequence[Float32]] = None,
    start_from: Optional[str] = None,
    gamma: Float32 = 1.0,
    layer_norm: bool = False,
    dropout: DropoutRate = 0.0,
    l2: Penalty = 0.0,
    trainable: bool = True,
) -> Model[InT, OutT]:
    """`spacy-elmo.ScalarMix.v2`: the paper's task-specific mix: gamma * sum_j softmax(w)_j * layer_j.

    weights (Optional[Sequence[float]]): pre-softmax values, one per biLM layer (token layer first),
        checked on the first batch; null: all zero, the plain mean. Not with `start_from`.
    start_from (Optional[str]): a TF-Hub module (directory, archive or catalogue name) whose trained layer
        weights and gamma are the initial values (`gamma` is then unused), read once when the mix is
        initialized.
    gamma (float): the initial scale.
    layer_norm (bool): normalise each layer (one mean and variance per layer over the batch) before mixing.
    dropout (float): in [0, 1), the mix's own dropout on its output in training (not `training.dropout`).
    l2 (float): >= 0, an L2 penalty on the raw weights (the paper's lambda).
    trainable (bool): whether `weights` and `gamma` learn.
    RETURNS (Model[List[Floats3d], List[Floats2d]]): each doc's layers -> one vector per token.
    """
    if start_from is not None and weights is not None:
        raise InputError(
            f"ScalarMix: give either `weights` or `start_from` ({start_from}), not both: the module's trained "
            "weights are the initial weights"
        )
    return Model(
        MIX_NODE,
        _forward,
        init=_init,
        params={"w": None, "gamma": None},
        attrs={
            "initial_weights": None if weights is None else [float(w) for w in weights],
            "initial_gamma": float(gamma),
            "layer_norm": layer_norm,
            "l2": l2,
            "trainable": trainable,
            "mix_dropout": dropout,
            ROW_WISE: not layer_norm,  # the layer norm's statistics span the batch's rows
            "start_from": start_from,
        },
    )


def _published(reference: str) -> Tuple[List[float], float]:
    from ...elmo.formats.tfhub import published_mix_of  # formats loads torch models: only when a mix starts from one
    from ...elmo.sources import reference_to, resolve

    mix = published_mix_of(resolve(reference_to(reference)).model_path())
    return mix.weights, mix.gamma


def _init(model: Model, X: Optional[InT] = None, Y: Optional[OutT] = None) -> None:
    """A head's initialize (spaCy's `nlp.initialize`, so `spacy train`) reads `start_from`: a module that
    cannot be read is one message there, as the `elmo` component's own errors are."""
    try:
        if X is not None and len(X):
            _allocate(model, X[0].shape[0])
        elif model.attrs.get("start_from") is not None:
            _allocate(model, None)
    except ElmoError as error:
        raise for_spacy_commands(error) from None


def _allocate(model: Model, n_layers: Optional[int]) -> None:
    """The initial parameters, checked against `n_layers` where a batch has told it."""
    initial, gamma = model.attrs["initial_weights"], model.attrs["initial_gamma"]
    if model.attrs.get("start_from") is not None:
        initial, gamma = _published(model.attrs["start_from"])
    if initial is None:
        assert n_layers is not None, "the number of layers is known from a batch or a published mix"
        initial = [0.0] * n_layers
    if n_layers is not None and len(initial) != n_layers:
        raise InputError(
            f"ScalarMix has {len(initial)} initial weights but the biLM gives {n_layers} layers; "
            f"give {n_layers} weights or leave `weights` unset (`start_from`: a module of another biLM)"
        )
    model.set_param("w", model.ops.asarray1f(initial))
    model.set_param("gamma", model.ops.asarray1f([gamma]))


def softmax(w: Any, xp: Any = np) -> Any:
    """Softmax of a 1d array of NumPy or CuPy (`xp`)."""
    e = xp.exp(w - w.max())
    return e / e.sum()


def mix_summary(model: Model) -> Dict[str, object]:
    """The normalised layer weights s_j and gamma, for logs and reports."""
    if not model.has_param("w"):
        return {"weights": None, "gamma": None}
    return {
        "weights": [float(v) for v in softmax(model.ops.to_numpy(model.get_param("w")))],
        "gamma": float(model.ops.to_numpy(model.get_param("gamma"))[0]),
    }


def mixes_in(model: Model) -> List[Dict[str, object]]:
    """The normalised weights and gamma of every ScalarMix inside `model`."""
    return [mix_summary(node) for node in model.walk() if node.name == MIX_NODE]


def _dropout_mask(xp: Any, shape: Tuple[int, ...], rate: float) -> Any:
    """Keep each value with probability 1 - rate, scaled by 1 / (1 - rate): float32 from 16-bit draws of
    the global generator (seeded by spaCy's `fix_random_seed`), seven times faster than float64
    uniforms, which took half of the mix's time per training step; the rate is rounded to 1/65536."""
    draws = xp.random.randint(0, 1 << 16, size=shape, dtype=xp.uint16)
    return (draws >= round(rate * (1 << 16))).astype(np.float32) * np.float32(1.0 / (1.0 - rate))


def _normalise(X: Any, xp: Any) -> Tuple[Any, Any]:
    """Per-layer normalisation of X `[L+1, N, D]` over all its rows; returns (normalised, 1/std)."""
    if X.shape[1] == 0:  # a batch of docs without a read token: nothing to normalise
        return X, xp.ones((X.shape[0], 1, 1), dtype=X.dtype)
    mean = X.mean(axis=(1, 2), keepdims=True)
    inv_std = 1.0 / xp.sqrt(X.var(axis=(1, 2), keepdims=True) + LAYER_NORM_EPS)
    return (X - mean) * inv_std, inv_std


def _forward(model: Model, Xs: InT, is_train: bool) -> Tuple[OutT, Callable]:
    if not Xs:
        return [], lambda dYs: []
    if not model.has_param("w"):
        _allocate(model, Xs[0].shape[0])
    # NumPy on the CPU, CuPy under spacy.require_gpu(): the arrays never leave their device.
    xp = model.ops.xp
    lengths = [x.shape[1] for x in Xs]
    splits = np.cumsum(lengths)[:-1].tolist()
    X = xp.concatenate(Xs, axis=1) if len(Xs) > 1 else Xs[0]
    w = model.get_param("w")
    gamma = float(model.get_param("gamma")[0])
    if X.shape[0] != w.shape[0]:
        raise InputError(
            f"ScalarMix has {w.shape[0]} layer weights but got {X.shape[0]} layers (`start_from`: a module of "
            "another biLM)"
        )
    s = softmax(w, xp)
    H, inv_std = _normalise(X, xp) if model.attrs["layer_norm"] else (X, None)
    mixed = xp.tensordot(s, H, axes=1)  # [N, D]
    rate = model.attrs["mix_dropout"] if is_train else 0.0
    keep = _dropout_mask(xp, mixed.shape, rate) if rate > 0 else None
    Y = gamma * mixed if keep is None else gamma * mixed * keep
    Y = Y.astype(np.float32, copy=False)

    def backprop(dYs: OutT) -> InT:
        dY = xp.concatenate(dYs, axis=0) if len(dYs) > 1 else dYs[0]
        if keep is not None:
            dY = dY * keep
        if model.attrs["trainable"]:
            ds = gamma * xp.tensordot(H, dY, axes=([1, 2], [0, 1]))
            dw = s * (ds - (s * ds).sum()) + 2.0 * model.attrs["l2"] * w
            model.inc_grad("w", model.ops.asarray1f(dw))
            model.inc_grad("gamma", (dY * mixed).sum().reshape(1).astype(np.float32))
        dH = gamma * s.reshape((-1, 1, 1)) * dY.reshape((1, *dY.shape))
        if inv_std is None or dH.shape[1] == 0:
            dX = dH
        else:  # the layer norm's backward
            mean_dH = dH.mean(axis=(1, 2), keepdims=True)
            mean_dHH = (dH * H).mean(axis=(1, 2), keepdims=True)
            dX = inv_std * (dH - mean_dH - H * mean_dHH)
        dX = dX.astype(np.float32, copy=False)
        return list(xp.split(dX, splits, axis=1))

    return list(xp.split(Y, splits, axis=0)), backprop
