"""A layer mix applied to the rows of the tokens the biLM read, never to whitespace rows.

The biLM leaves whitespace tokens unread (`batch_plan.read_by_bilm`, the one rule); their rows of the
layers are zeros. A mix that looks across rows (ScalarMix with `layer_norm`: one mean and variance per
layer over the batch) must not count them, and a head expects a zero vector for them, as `token.vector`
has. So the mix is handed the read rows only, taken by that same rule from the docs, and its output is
put back in token order with zero rows for the rest: the mix is told which rows are tokens instead of
guessing from rows that happen to be zero.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d, Floats3d
from thinc.util import get_width

from .batch_plan import kept_tokens

READ_ROWS_NODE = "elmo-read-rows"


def mix_read_rows(
    source: Model[List[Doc], List[Floats3d]], mix: Model[List[Floats3d], List[Floats2d]]
) -> Model[List[Doc], List[Floats2d]]:
    """`source`'s layers, the read rows of each doc through `mix`, whitespace rows zero.

    One node over `[source, mix]`, as thinc's `chain(source, mix)` is, so a pipeline saved when the two
    were chained loads into it.

    source (Model[List[Doc], List[Floats3d]]): a listener or a biLM layer, `[L+1, n, D]` per doc.
    mix (Model[List[Floats3d], List[Floats2d]]): the mix, given `[L+1, r, D]` per doc (r read tokens).
    RETURNS (Model[List[Doc], List[Floats2d]]): `[n, D]` per doc.
    """
    return Model(READ_ROWS_NODE, _forward, init=_init, layers=[source, mix], dims={"nO": None})


def apply_to_read_rows(mix: Model, docs: List[Doc], layers: List[Floats3d]) -> List[Floats2d]:
    """`mix.predict` on the read rows of each doc's `layers`, put back in token order (the component's
    pooling, which is given the layers rather than the docs)."""
    rows = _read_rows(mix.ops, docs)
    return _scatter(mix.ops, mix.predict(_gather(layers, rows)), rows, layers)


def _init(model: Model, X: Optional[List[Doc]] = None, Y: Any = None) -> None:
    source, mix = model.layers
    source.initialize(X=X)
    if X is None:
        mix.initialize()
        return
    layers = source.predict(X)
    mix.initialize(X=_gather(layers, _read_rows(model.ops, X)))
    model.set_dim("nO", get_width(apply_to_read_rows(mix, X, layers)), force=True)


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    source, mix = model.layers
    layers, source_backprop = source(docs, is_train)
    rows = _read_rows(model.ops, docs)
    mixed, mix_backprop = mix(_gather(layers, rows), is_train)
    outputs = _scatter(model.ops, mixed, rows, layers)

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        d_mixed = [d[r] if len(r) < len(d) else d for d, r in zip(d_outputs, rows)]
        d_read = mix_backprop(d_mixed)
        d_layers = []
        for d, r, x in zip(d_read, rows, layers):
            if len(r) < x.shape[1]:
                full = model.ops.alloc3f(*x.shape)
                full[:, r] = d
                d = full
            d_layers.append(d)
        return source_backprop(d_layers)

    return outputs, backprop


def _read_rows(ops: Any, docs: List[Doc]) -> List[Any]:
    """Each doc's read token indices, as arrays of `ops` (CuPy indexes CuPy arrays with CuPy indices)."""
    return [ops.asarray1i(kept_tokens(doc)) for doc in docs]


def _gather(layers: List[Floats3d], rows: List[Any]) -> List[Floats3d]:
    """Each doc's layers at its read rows (the array itself where every token was read)."""
    return [x[:, r] if len(r) < x.shape[1] else x for x, r in zip(layers, rows)]


def _scatter(ops: Any, mixed: List[Floats2d], rows: List[Any], layers: List[Floats3d]) -> List[Floats2d]:
    """Each doc's mixed rows in token order, zero rows for the tokens the biLM did not read."""
    outputs = []
    for y, r, x in zip(mixed, rows, layers):
        if len(r) < x.shape[1]:
            full = ops.alloc2f(x.shape[1], y.shape[1])
            full[r] = y
            y = full
        outputs.append(y)
    return outputs
