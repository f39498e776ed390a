"""A layer mix applied to the rows of the tokens the biLM read, never to whitespace rows.

The biLM leaves whitespace tokens unread (`bilm_layer/read_tokens.read_by_bilm`, the one rule); their rows of the
layers are zeros. A mix that looks across rows (ScalarMix with `layer_norm`: one mean and variance per
layer over the batch) must not count them, and a head expects a zero vector for them, as `token.vector`
has. So the mix is handed the read rows only, taken by that same rule from the docs, and its output is
put back in token order with zero rows for the rest: the mix is told which rows are tokens instead of
guessing from rows that happen to be zero. A mix whose every output row depends on its own input row
alone (attr `row_wise`: fixed pooling, a ScalarMix without layer norm) runs on all rows instead and the
unread ones are zeroed, sparing the copies of the layers, which cost several times the mean pooling
itself (docs/results.md, `python -m benchmarks.bench_read_rows`).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d, Floats3d
from thinc.util import get_width

from ..bilm_layer.read_tokens import read_mask

READ_ROWS_NODE = "elmo-read-rows"
ROW_WISE = "row_wise"  # a mix's attr: output row i depends on input row i alone


def mix_read_rows(
    source: Model[List[Doc], List[Floats3d]], mix: Model[List[Floats3d], List[Floats2d]]
) -> Model[List[Doc], List[Floats2d]]:
    """`source`'s layers, the read rows of each doc through `mix`, whitespace rows zero.

    source (Model[List[Doc], List[Floats3d]]): a listener or a biLM layer, `[L+1, n, D]` per doc.
    mix (Model[List[Floats3d], List[Floats2d]]): the mix, given `[L+1, r, D]` per doc (r read tokens),
        or all n rows where it is `row_wise`.
    RETURNS (Model[List[Doc], List[Floats2d]]): `[n, D]` per doc.
    """
    return Model(READ_ROWS_NODE, _forward, init=_init, layers=[source, mix], dims={"nO": None})


def apply_to_read_rows(mix: Model, docs: List[Doc], layers: List[Floats3d]) -> List[Floats2d]:
    """`mix.predict` on the read rows of each doc's `layers`, in token order with zero rows for the rest
    (the component's pooling, which is given the layers rather than the docs)."""
    masks = _read_masks(mix.ops, docs)
    if _row_wise(mix):
        return _zero_unread(mix.predict(layers), masks)
    return _put_back(mix.ops, mix.predict(_gather(layers, masks)), masks)


def _row_wise(mix: Model) -> bool:
    return bool(mix.attrs.get(ROW_WISE, False))


def _init(model: Model, X: Optional[List[Doc]] = None, Y: Any = None) -> None:
    source, mix = model.layers
    source.initialize(X=X)
    if X is None:
        mix.initialize()
        return
    layers = source.predict(X)
    mix.initialize(X=layers if _row_wise(mix) else _gather(layers, _read_masks(model.ops, X)))
    model.set_dim("nO", get_width(apply_to_read_rows(mix, X, layers)), force=True)


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    source, mix = model.layers
    layers, source_backprop = source(docs, is_train)
    masks = _read_masks(model.ops, docs)
    if _row_wise(mix):
        mixed, mix_backprop = mix(layers, is_train)
        outputs = _zero_unread(mixed, masks)

        def backprop_row_wise(d_outputs: List[Floats2d]) -> List[Doc]:
            d_mixed = [d if mask is None else d.copy() for d, mask in zip(d_outputs, masks)]
            return source_backprop(mix_backprop(_zero_unread(d_mixed, masks)))

        return outputs, backprop_row_wise
    mixed, mix_backprop = mix(_gather(layers, masks), is_train)

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        return source_backprop(_put_back(model.ops, mix_backprop(_gather(d_outputs, masks)), masks))

    return _put_back(model.ops, mixed, masks), backprop


Mask = Optional[Any]  # a doc's read rows as a boolean array of the ops; None where every token was read


def _read_masks(ops: Any, docs: List[Doc]) -> List[Mask]:
    """Each doc's read rows, as boolean arrays of `ops` (CuPy indexes CuPy arrays with CuPy masks)."""
    masks = [read_mask(doc) for doc in docs]
    return [None if mask.all() else ops.xp.asarray(mask) for mask in masks]


def _gather(arrays: List[Any], masks: List[Mask]) -> List[Any]:
    """Each doc's array (layers `[L+1, n, D]` or rows `[n, D]`) at its read rows (the array itself where
    every token was read)."""
    return [x if mask is None else x[..., mask, :] for x, mask in zip(arrays, masks)]


def _put_back(ops: Any, arrays: List[Any], masks: List[Mask]) -> List[Any]:
    """Each doc's array of read rows (`[r, D]` or `[L+1, r, D]`) in token order, zero rows for the tokens
    the biLM did not read."""
    outputs = []
    for part, mask in zip(arrays, masks):
        if mask is not None:
            full = ops.xp.zeros((*part.shape[:-2], len(mask), part.shape[-1]), dtype=part.dtype)
            full[..., mask, :] = part
            part = full
        outputs.append(part)
    return outputs


def _zero_unread(rows: List[Floats2d], masks: List[Mask]) -> List[Floats2d]:
    """`rows` (each doc's, in token order) with the unread ones set to zero, in place."""
    for y, mask in zip(rows, masks):
        if mask is not None:
            y[~mask] = 0.0
    return rows
