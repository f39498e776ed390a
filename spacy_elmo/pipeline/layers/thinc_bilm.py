"""The torch BiLM as a thinc layer: `List[Doc] -> List[Floats3d]`, one `[L+1, n_tokens, 2P]` per doc.

The layer never reads a file when it is built: it records where its weights come from (a model
directory or zip archive of any format, options/weights paths, a bundled model's name, or else the
default bundled model) and loads them on first use or in `initialize`. A pipeline saved with `to_disk`
carries options, parameters and what else its format needs (formats.describe) inside the torch shim's
bytes, so `spacy.load` needs none of those paths any more, also when the layer sits inside another
model (after `replace_listeners`).

Whitespace tokens (`token.is_space`) never reach the biLM, which saw none in training; their rows are
zeros. The layer's segmenter (segment.py; by default per sentence, and windows for anything longer
than 256 tokens) cuts each doc into pieces, so memory stays bounded however long the doc. Stateless
batches of these pieces are sorted by length and cut by a padded-token budget (padding only costs);
stateful batches keep the docs' order, because the carried states follow batch rows.

A process forked after torch ran a parallel op (`nlp.pipe(n_process=2)` on Linux) deadlocks in its
first parallel op; so once a biLM is loaded, forked children run torch single-threaded, which is also
what several worker processes sharing the cores want.
"""

from __future__ import annotations

import io
import os
import pickle
import warnings
import weakref
from functools import partial
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union, cast

import numpy as np
import srsly
import torch
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchWrapper_v3, get_torch_default_device, torch2xp, xp2torch
from thinc.types import Floats3d
from torch import nn

from ...errors import ElmoError
from ...formats import ManyLangsBiLM, describe, rebuild
from ...models.sources import ModelReference, load_reference, model_reference, reference_options
from ...nn.bilm import BiLM
from ...nn.fast import FAST_MODES, FastModeError, FastModeUnavailable, make_fast
from ...nn.options import ElmoOptions
from ...nn.precision import fp32_scope
from ..segment import Segment, Segmenter, check_segments, sentence_windows

InT = List[Doc]
OutT = List[Floats3d]
PathLike = Union[str, Path]


class BiLMHolder(nn.Module):
    """A slot for the BiLM, so the thinc model's structure is fixed before any weights are loaded."""

    def __init__(self) -> None:
        super().__init__()
        self.bilm: Optional[BiLM] = None

    def forward(self, sentences: List[List[str]], stateful: bool) -> torch.Tensor:
        """Token strings -> layers `[L+1, batch, n, 2P]` (boundaries added and removed inside)."""
        assert self.bilm is not None
        return self.bilm.forward_sentences(sentences, stateful=stateful).layers


def _serialize_holder(holder: BiLMHolder) -> bytes:
    state = io.BytesIO()
    torch.save(holder.state_dict(), state)
    options = holder.bilm.options.to_dict() if holder.bilm is not None else None
    # A format's own parts (ELMoForManyLangs' vocabularies) travel beside the options (formats.describe).
    extra = describe(holder.bilm) if holder.bilm is not None else {}
    return srsly.msgpack_dumps({"options": options, "state": state.getvalue(), **extra})


class UntrustedPickleError(ElmoError):
    """Saved biLM bytes that hold more than tensors: unpickling them could run code, so they are refused."""


def _load_state(data: bytes, device: torch.device) -> Any:
    """The saved state dict, unpickled with `weights_only=True` whatever torch's default (older torch, or
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1): a pipeline from elsewhere must not be able to run code on load."""
    try:
        return torch.load(io.BytesIO(data), map_location=device, weights_only=True)
    except pickle.UnpicklingError as err:
        raise UntrustedPickleError(
            "the saved elmo biLM holds pickled objects that are not tensors, so loading it could run code, "
            f"and it is refused ({str(err).splitlines()[0]}). spacy-elmo saves only tensors: this pipeline was "
            "not saved by spacy-elmo or was altered; load only pipelines from a source you trust"
        ) from None


def _deserialize_holder(_: BiLMHolder, data: bytes, device: torch.device) -> BiLMHolder:
    """A new holder from `data` (thinc passes the current one, which is replaced whole)."""
    msg = srsly.msgpack_loads(data)
    holder = BiLMHolder()
    if msg["options"] is not None:
        holder.bilm = rebuild(ElmoOptions.from_dict(msg["options"]), msg)
        holder.load_state_dict(_load_state(msg["state"], device))
        holder.bilm.eval()
    return holder.to(device)


def _convert_inputs(model: Model, X: Tuple[List[List[str]], bool], is_train: bool) -> Tuple[ArgsKwargs, Callable]:
    sentences, stateful = X
    return ArgsKwargs(args=(sentences,), kwargs={"stateful": stateful}), lambda d: None


def _convert_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> Tuple[Any, Callable]:
    """Torch -> the ops' arrays without a host round trip: a CUDA tensor becomes a CuPy array (dlpack)."""
    _, layers = inputs_outputs

    def backprop(d_layers: Any) -> ArgsKwargs:
        return ArgsKwargs(args=(layers,), kwargs={"grad_tensors": xp2torch(d_layers, device=layers.device)})

    return torch2xp(layers, ops=model.ops), backprop


def declared_layers(model: Model) -> Optional[int]:
    """L + 1 for the biLM the layer will load, read from its options alone (cheap, no weights);
    None when the options come only at initialize."""
    bilm = get_bilm(model)
    if bilm is not None:
        return bilm.n_layers
    options = reference_options(_reference(model))
    return None if options is None else options.n_output_layers


@registry.architectures("spacy-elmo.BiLM.v2")
def build_bilm_v2(
    options: Optional[PathLike] = None,
    weights: Optional[PathLike] = None,
    name: Optional[str] = None,
    stateful: bool = False,
    max_batch_tokens: int = 4096,
    segmentation: Optional[Segmenter] = None,
    warm_start: bool = False,
    fast_mode: Optional[str] = None,
    path: Optional[PathLike] = None,
    tf32: bool = False,
) -> Model[InT, OutT]:
    """The biLM's layers per doc, `[L+1, n_tokens, 2P]`. The source is `path`, else `name`, else
    `options` + `weights` (default: the bundled model); it is read at initialization or first use, never
    when the config is built. Whether the biLM trains is its owner's setting (the `elmo` component's
    `frozen`, or ElmoTok2Vec's), written through `set_frozen`.

    options (Optional[Union[str, Path]]): an options.json, with `weights`.
    weights (Optional[Union[str, Path]]): a weights.hdf5, with `options`.
    name (Optional[str]): a bundled model, or a catalogue model once `python -m spacy_elmo download NAME`
        has fetched it.
    stateful (bool): carry the LSTM states from batch to batch, as the original (batches keep the docs'
        order).
    max_batch_tokens (int): at most this many padded tokens per batch.
    segmentation (Optional[Segmenter]): cuts docs into the pieces the biLM reads (a registered `@misc`
        function's result); null: `spacy-elmo.sentence_windows.v1` with its defaults.
    warm_start (bool): every piece starts from a fixed warm LSTM state instead of zeros.
    fast_mode (Optional[str]): null (exact) or "int8", a fast inexact copy for prediction and frozen
        training; where it cannot run, the exact biLM runs, with a warning.
    path (Optional[Union[str, Path]]): a model directory or archive of any format (formats.FORMATS).
    tf32 (bool): TF32 products on a GPU (faster, about 1e-3 from the exact vectors); by default the biLM
        computes in full fp32 whatever torch's global flags (nn/precision.py).
    RETURNS (Model[List[Doc], List[Floats3d]]): the biLM layer.
    """
    model_reference(options, weights, name, path)  # refuses a bad reference when the config is built
    if fast_mode is not None and fast_mode not in FAST_MODES:
        raise FastModeError(f"unknown fast_mode {fast_mode!r}; choose one of {', '.join(FAST_MODES)} or null")
    if fast_mode is not None and stateful:
        raise FastModeError("fast_mode runs stateless only; set stateful = false or fast_mode = null")
    if max_batch_tokens < 1:
        raise ElmoError(f"max_batch_tokens must be at least 1, got {max_batch_tokens}")
    segmenter = sentence_windows() if segmentation is None else segmentation
    if not callable(segmenter):
        raise ElmoError(f"segmentation must be a segmenter (a registered function's result), got {segmenter!r}")
    wrapper = PyTorchWrapper_v3(
        BiLMHolder(),
        convert_inputs=_convert_inputs,
        convert_outputs=_convert_outputs,
        serialize_model=_serialize_holder,
        deserialize_model=_deserialize_holder,
    )
    return Model(
        "elmo-bilm",
        partial(_forward, segmenter=segmenter),  # a closure: attrs must serialize, a segmenter need not
        init=_init,
        layers=[wrapper],
        dims={"nO": None},
        attrs={
            "options": None if options is None else str(options),
            "weights": None if weights is None else str(weights),
            "name": name,
            "path": None if path is None else str(path),
            "stateful": stateful,
            "max_batch_tokens": max_batch_tokens,
            "frozen": True,
            "warm_start": warm_start,
            "fast_mode": fast_mode,
            "tf32": tf32,
        },
    )


def _holder(model: Model) -> BiLMHolder:
    """The torch module inside the layer's PyTorchWrapper: the one place that knows where it sits."""
    return model.layers[0].shims[0]._model


def get_bilm(model: Model) -> Optional[BiLM]:
    """The torch BiLM inside a layer built by `build_bilm_v2`, or None before it is loaded."""
    return _holder(model).bilm


def set_frozen(model: Model, frozen: bool) -> None:
    """Whether the layer's biLM trains (`frozen = false`) or only predicts; set by the layer's owner."""
    model.attrs["frozen"] = frozen


_FORK_GUARD: List[bool] = []


def _single_threaded_after_fork() -> None:
    if not _FORK_GUARD:
        os.register_at_fork(after_in_child=lambda: torch.set_num_threads(1))
        _FORK_GUARD.append(True)


def set_bilm(model: Model, bilm: BiLM) -> None:
    """Put `bilm` in the layer, on the device of the layer's ops (a GPU after spacy.require_gpu())."""
    _holder(model).bilm = bilm.eval().to(get_torch_default_device())
    model.set_dim("nO", bilm.output_dim, force=True)


def _reference(model: Model) -> ModelReference:
    """The source recorded in the layer's config."""
    attrs = model.attrs
    return ModelReference(
        path=attrs.get("path"), options=attrs["options"], weights=attrs["weights"], name=attrs["name"]
    )


def load_source(model: Model, options: Optional[PathLike] = None, weights: Optional[PathLike] = None) -> None:
    """Load the biLM from the given paths, else from the source recorded in the layer's config.
    `options` alone may be a model directory or archive of any format (what `path` takes), so that
    `--paths.elmo_options DIR` works with the shipped configs."""
    set_bilm(model, load_reference(_reference(model).overridden(options, weights), model.attrs["warm_start"]))


# The fast copy of each loaded biLM, made on first use (None where the mode cannot run fast on the
# biLM's device); a new biLM (set_bilm) gets a new copy.
_FAST_COPIES: "weakref.WeakKeyDictionary[BiLM, Tuple[str, Optional[BiLM]]]" = weakref.WeakKeyDictionary()


def fast_copy(bilm: BiLM, mode: str) -> Optional[BiLM]:
    """The `mode` copy of `bilm`, or None where the mode cannot run on its device (int8 on a GPU): the
    layer then runs the exact biLM, which is the faster one there, and says so once in a warning, so
    that one config serves every machine."""
    cached = _FAST_COPIES.get(bilm)
    if cached is not None and cached[0] == mode:
        return cached[1]
    try:
        if isinstance(bilm, ManyLangsBiLM):
            raise FastModeUnavailable(f"the {mode!r} fast mode does not run ELMoForManyLangs models")
        copy: Optional[BiLM] = make_fast(bilm, mode)
    except FastModeUnavailable as error:
        warnings.warn(f"fast_mode {mode!r} is not used: {error}. Running the exact biLM instead.", stacklevel=2)
        copy = None
    _FAST_COPIES[bilm] = (mode, copy)
    return copy


def ensure_loaded(model: Model) -> BiLM:
    """The layer's biLM, loaded from its recorded source first if it is not yet (first use, initialize,
    and before the layer's owner serializes it, so that the saved bytes carry the weights)."""
    _single_threaded_after_fork()
    if get_bilm(model) is None:
        load_source(model)
    bilm = get_bilm(model)
    assert bilm is not None
    if not model.has_dim("nO"):
        model.set_dim("nO", bilm.output_dim)
    return bilm


def _init(model: Model, X: Optional[InT] = None, Y: Any = None) -> None:
    ensure_loaded(model)


def plan_batches(
    lengths: Sequence[int], max_batch_tokens: int, stateful: bool, batch_size: int = 64
) -> List[List[int]]:
    """Doc indices per sub-batch. Stateless: longest first, each batch's padded size
    (rows x longest row) within the budget. Stateful: consecutive docs, so rows keep their states."""
    order = list(range(len(lengths)))
    if stateful:
        return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    order.sort(key=lambda i: lengths[i], reverse=True)
    batches: List[List[int]] = []
    for i in order:
        if lengths[i] == 0:
            continue
        if batches and lengths[batches[-1][0]] * (len(batches[-1]) + 1) <= max_batch_tokens:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def doc_segments(segmenter: Segmenter, doc: Doc, keep: np.ndarray) -> List[Segment]:
    """The pieces the biLM sees of `doc`, in the index space of its kept (non-space) tokens."""
    segments = segmenter(doc, keep) if len(keep) else []
    check_segments(segments, len(keep), segmenter)
    return segments


def _forward(model: Model, docs: InT, is_train: bool, *, segmenter: Segmenter) -> Tuple[OutT, Callable]:
    bilm = ensure_loaded(model)
    bilm.tf32 = model.attrs["tf32"]
    wrapper = model.layers[0]
    stateful = model.attrs["stateful"]
    ops = model.ops
    keep = [np.array([i for i, token in enumerate(doc) if not token.is_space], dtype=np.int64) for doc in docs]
    words = [[doc[int(i)].text for i in rows] for doc, rows in zip(docs, keep)]
    # One unit per piece: (doc index, segment).
    units = [(d, seg) for d, (doc, rows) in enumerate(zip(docs, keep)) for seg in doc_segments(segmenter, doc, rows)]
    # Arrays of the ops (CuPy on a GPU), so the layers never make a host round trip.
    outputs = [ops.alloc3f(bilm.n_layers, len(doc), bilm.output_dim) for doc in docs]
    rows_of = [ops.asarray1i(cast(Sequence[int], rows)) for rows in keep]
    trainable = is_train and not model.attrs["frozen"]
    fast = None if trainable or model.attrs["fast_mode"] is None else fast_copy(bilm, model.attrs["fast_mode"])
    callbacks = []
    lengths = [seg.end - seg.start for _, seg in units]
    for batch in plan_batches(lengths, model.attrs["max_batch_tokens"], stateful):
        sentences = [words[units[u][0]][units[u][1].start : units[u][1].end] for u in batch]
        if trainable:
            layers, layers_backprop = wrapper.begin_update((sentences, stateful))
            callbacks.append((batch, layers.shape, layers_backprop))
        elif fast is not None:
            with torch.inference_mode():
                layers = torch2xp(fast.forward_sentences(sentences).layers, ops=ops)
        else:
            with torch.inference_mode():
                layers = wrapper.predict((sentences, stateful))
        for row, u in enumerate(batch):
            d, seg = units[u]
            outputs[d][:, rows_of[d][seg.keep_start : seg.keep_end]] = layers[
                :, row, seg.keep_start - seg.start : seg.keep_end - seg.start
            ]

    def backprop(d_outputs: OutT) -> InT:
        for batch, shape, batch_backprop in callbacks:
            d_layers = ops.alloc(shape, dtype="float32")
            for row, u in enumerate(batch):
                d, seg = units[u]
                d_layers[:, row, seg.keep_start - seg.start : seg.keep_end - seg.start] = d_outputs[d][
                    :, rows_of[d][seg.keep_start : seg.keep_end]
                ]
            with fp32_scope(bilm.tf32):  # the biLM's gradients as exact as its forward
                batch_backprop(d_layers)
        return []

    return outputs, backprop
