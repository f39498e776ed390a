"""The torch BiLM as a thinc layer: `List[Doc] -> List[Floats3d]`, one `[L+1, n_tokens, 2P]` per doc.

The layer never reads a file when it is built: it records where its weights come from (a model
directory or zip archive of any format, options/weights paths, a bundled model's name, or else the
default bundled model) and loads them on first use or in `initialize`. A pipeline saved with `to_disk`
carries options, parameters and what else its format needs (formats.describe) inside the torch shim's
bytes, so `spacy.load` needs none of those paths any more, also when the layer sits inside another
model (after `replace_listeners`).

The layer's segmenter (segment.py; by default per sentence, and windows for anything longer than 256
tokens) cuts each doc into pieces, so memory stays bounded however long the doc; which tokens the biLM
reads: batch_plan.py; how pieces are batched: elmo/nn/batch_plan.py. Stateless batches are sorted by length and cut by a
padded-token budget; stateful batches keep the docs' order, because the carried states follow batch
rows. The torch module and its bytes: bilm_holder.py; what layers share in a process:
process_state.py; the settings that follow the config, never the saved pipeline: run_settings.py.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union, cast

import torch
from pydantic import SkipValidation
from spacy.tokens import Doc
from thinc.api import Model, PyTorchWrapper_v3, torch2xp
from thinc.types import Floats3d
from typing_extensions import Annotated

from ...elmo.nn.batch_plan import plan_batches
from ...elmo.nn.bilm import BiLM
from ...elmo.nn.fast.fast_bilm import FAST_MODES, FastModeError
from ...elmo.nn.precision import fp32_scope
from ...elmo.nn.run_options import AUTO, RunOptions
from ...elmo.sources.resolver import ModelReference, model_reference, reference_options, resolve
from ...elmo.util.validation import must_be, validate_arguments
from ..device import place_bilm
from .batch_plan import doc_segments, kept_tokens
from .bilm_holder import BiLMHolder, convert_inputs, convert_outputs, deserialize_holder, serialize_holder
from .process_state import PROCESS
from .run_settings import RUN_SETTINGS, RunSettings
from .segment import Segmenter, build_sentence_windows_v1, check_segmenter

InT = List[Doc]
OutT = List[Floats3d]
PathLike = Union[str, Path]
PositiveInt = Annotated[int, must_be("an integer of at least 1", ge=1)]


def declared_layers(model: Model) -> Optional[int]:
    """L + 1 for the biLM the layer will load, read from its options alone (cheap, no weights);
    None when the options come only at initialize."""
    bilm = get_bilm(model)
    if bilm is not None:
        return bilm.n_layers
    options = reference_options(_reference(model))
    return None if options is None else options.n_output_layers


@validate_arguments("spacy-elmo.BiLM.v2")
def build_bilm_v2(
    options: Optional[PathLike] = None,
    weights: Optional[PathLike] = None,
    name: Optional[str] = None,
    stateful: bool = False,
    max_batch_tokens: PositiveInt = 4096,
    segmentation: SkipValidation[Optional[Segmenter]] = None,
    warm_start: bool = False,
    fast_mode: Optional[str] = None,
    path: Optional[PathLike] = None,
    tf32: bool = False,
    time_loop: str = AUTO,
) -> Model[InT, OutT]:
    """`spacy-elmo.BiLM.v2`: the biLM's layers per doc, `[L+1, n_tokens, 2P]`. The source is `path`, else
    `name`, else `options` + `weights` (default: the bundled model); it is read at initialization or first
    use, never when the config is built. It learns when run for training, unless its owner froze it: the
    `elmo` component then never runs it so (its `frozen`); a head's own copy is frozen through `set_frozen`.

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
    fast_mode (Optional[str]): null (exact), "int8" (CPU) or "bf16" (GPU), a fast inexact copy for
        prediction and frozen training; where it cannot run, the exact biLM runs, with a warning.
    path (Optional[Union[str, Path]]): a model directory or archive of any format (formats.FORMATS).
    tf32 (bool): TF32 products on a GPU (faster, about 1e-3 from the exact vectors); by default the biLM
        computes in full fp32 whatever torch's global flags (elmo/nn/precision.py).
    time_loop (str): how the LSTM steps through time (elmo/nn/time_loops/dispatch.py): "auto" (the device's default,
        today "step"), "step", or, experimental, "wavefront" or "captured" (the wavefront as CUDA graphs;
        on the CPU without a graph), exact as "step" is.
    RETURNS (Model[List[Doc], List[Floats3d]]): the biLM layer; a bad source or setting is refused here, when
        the config is built.
    """
    model_reference(options, weights, name, path)  # refuses a bad reference when the config is built
    if fast_mode is not None and fast_mode not in FAST_MODES:
        raise FastModeError(f"unknown fast_mode {fast_mode!r}; choose one of {', '.join(FAST_MODES)} or null")
    if fast_mode is not None and stateful:
        raise FastModeError("fast_mode runs stateless only; set stateful = false or fast_mode = null")
    RunOptions(tf32, time_loop)  # refuses an unknown time_loop when the config is built
    segmenter = build_sentence_windows_v1() if segmentation is None else check_segmenter(segmentation)
    wrapper = PyTorchWrapper_v3(
        BiLMHolder(),
        convert_inputs=convert_inputs,
        convert_outputs=convert_outputs,
        serialize_model=serialize_holder,
        deserialize_model=partial(deserialize_holder, warm_start=warm_start),
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
            RUN_SETTINGS: RunSettings(
                stateful, max_batch_tokens, fast_mode, tf32, warm_start=warm_start, time_loop=time_loop
            ),
        },
    )


def _holder(model: Model) -> BiLMHolder:
    """The torch module inside the layer's PyTorchWrapper: the one place that knows where it sits."""
    return model.layers[0].shims[0]._model


def get_bilm(model: Model) -> Optional[BiLM]:
    """The torch BiLM inside a layer built by `bilm_layer`, or None before it is loaded."""
    return _holder(model).bilm


def set_frozen(model: Model, frozen: bool) -> None:
    """Whether the layer's biLM only predicts, also when run for training: a head's own copy
    (ElmoTok2Vec.v1, `replace_listeners`), which has no `elmo` component to decide."""
    model.attrs[RUN_SETTINGS] = replace(run_settings(model), frozen=frozen)


def run_settings(model: Model) -> RunSettings:
    """The layer's settings from its config (run_settings.py: never the saved ones)."""
    return model.attrs[RUN_SETTINGS]


def set_bilm(model: Model, bilm: BiLM) -> None:
    """Put `bilm` in the layer, on the device of the layer's ops (a GPU after spacy.require_gpu())."""
    _holder(model).bilm = place_bilm(bilm)
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
    set_bilm(model, resolve(_reference(model).overridden(options, weights)).load(run_settings(model).warm_start))


def ensure_loaded(model: Model) -> BiLM:
    """The layer's biLM, loaded from its recorded source first if it is not yet (first use, initialize,
    and before the layer's owner serializes it, so that the saved bytes carry the weights)."""
    PROCESS.single_threaded_in_workers()
    if get_bilm(model) is None:
        load_source(model)
    bilm = get_bilm(model)
    assert bilm is not None
    if not model.has_dim("nO"):
        model.set_dim("nO", bilm.output_dim)
    return bilm


def _init(model: Model, X: Optional[InT] = None, Y: Any = None) -> None:
    ensure_loaded(model)


def _forward(model: Model, docs: InT, is_train: bool, *, segmenter: Segmenter) -> Tuple[OutT, Callable]:
    bilm = ensure_loaded(model)
    settings = run_settings(model)
    run = RunOptions(tf32=settings.tf32, time_loop=settings.time_loop)  # per call: the torch module is shared
    wrapper = model.layers[0]
    stateful = settings.stateful
    if stateful:
        PROCESS.warn_stateful_in_worker()
    ops = model.ops
    keep = [kept_tokens(doc) for doc in docs]
    words = [[doc[int(i)].text for i in rows] for doc, rows in zip(docs, keep)]
    # One unit per piece: (doc index, segment).
    units = [(d, seg) for d, (doc, rows) in enumerate(zip(docs, keep)) for seg in doc_segments(segmenter, doc, rows)]
    # Arrays of the ops (CuPy on a GPU), so the layers never make a host round trip.
    outputs = [ops.alloc3f(bilm.n_layers, len(doc), bilm.output_dim) for doc in docs]
    rows_of = [ops.asarray1i(cast(Sequence[int], rows)) for rows in keep]
    trainable = is_train and not settings.frozen
    fast = None if trainable or settings.fast_mode is None else PROCESS.fast_copy(bilm, settings.fast_mode)
    callbacks = []
    lengths = [seg.end - seg.start for _, seg in units]
    for batch in plan_batches(lengths, settings.max_batch_tokens, stateful):
        sentences = [words[units[u][0]][units[u][1].start : units[u][1].end] for u in batch]
        if trainable:
            layers, layers_backprop = wrapper.begin_update((sentences, stateful, run))
            callbacks.append((batch, layers.shape, layers_backprop))
        elif fast is not None:
            with torch.inference_mode():
                layers = torch2xp(fast.forward_sentences(sentences, run=run).layers, ops=ops)
        else:
            with torch.inference_mode():
                layers = wrapper.predict((sentences, stateful, run))
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
            with fp32_scope(run.tf32):  # the biLM's gradients as exact as its forward
                batch_backprop(d_layers)
        return []

    return outputs, backprop
