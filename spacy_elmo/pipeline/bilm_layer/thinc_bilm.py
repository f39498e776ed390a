"""The torch BiLM as a thinc layer: `List[Doc] -> List[Floats3d]`, one `[L+1, n_tokens, 2P]` per doc.

The layer never reads a file when it is built: it records where its weights come from (one reference,
`--model`'s: a model's name, a folder or archive of any format, or `hf:ORG/REPO[@REV]`; BiLM.v2's options
and weights paths as the pair `reference_to` takes) and loads them on first use or in `initialize`. A
pipeline saved with `to_disk`
carries options, parameters and what else its format needs (formats.describe) inside the torch shim's
bytes, so `spacy.load` needs none of those paths any more, also when the layer sits inside another
model (after `replace_listeners`).

The layer's segmenter (segment.py; by default per sentence, and windows for anything longer than 256
tokens) cuts each doc into pieces, so memory stays bounded however long the doc; which tokens the biLM
reads: read_tokens.py; how pieces are batched: elmo/nn/batch_plan.py. Stateless batches are sorted by
length and cut by a padded-token budget; stateful batches keep the docs' order, because the carried states follow batch
rows. The torch module and its bytes: bilm_holder.py; what layers share in a process:
process_state.py; the settings that follow the config, never the saved pipeline: run_settings.py.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union, cast

import torch
from pydantic import SkipValidation
from spacy.tokens import Doc
from thinc.api import Model, PyTorchWrapper_v3, torch2xp
from thinc.types import Floats3d
from typing_extensions import Annotated

from ...elmo.errors import InputError
from ...elmo.nn.batch_plan import plan_batches
from ...elmo.nn.bilm import BiLM
from ...elmo.nn.fast.fast_bilm import FastModeError, check_fast_mode
from ...elmo.nn.precision import fp32_scope
from ...elmo.nn.run_options import AUTO, RunOptions
from ...elmo.sources.bundled import DEFAULT_MODEL
from ...elmo.sources.resolver import ModelReference, check_reference, reference_options, reference_to, resolve
from ...elmo.util.validation import must_be, validate_arguments
from ..device import place_bilm
from .bilm_holder import BiLMHolder, convert_inputs, convert_outputs, deserialize_holder, serialize_holder
from .process_state import PROCESS
from .read_tokens import doc_segments, kept_tokens
from .run_settings import RUN_SETTINGS, RunSettings
from .segment import Segment, Segmenter, build_sentence_windows_v1, check_segmenter

InT = List[Doc]
OutT = List[Floats3d]
PathLike = Union[str, Path]
PositiveInt = Annotated[int, must_be("an integer of at least 1", ge=1)]
SOURCE = "source"  # the layer's attr that records where its weights come from: `reference_to`'s arguments

# The layer's name, by which a pipeline's models are searched for their biLM (pipeline_bilm.py).
LAYER_NAME = "elmo-bilm"


def declared_layers(model: Model) -> Optional[int]:
    """L + 1 for the biLM the layer will load, read from its options alone (cheap, no weights);
    None when the options come only at initialize."""
    bilm = get_bilm(model)
    if bilm is not None:
        return bilm.n_layers
    try:
        reference = _reference(model)
    except InputError:  # names no model here (yet): loading says why
        return None
    options = reference_options(reference)
    return None if options is None else options.n_output_layers


@validate_arguments("spacy-elmo.BiLM.v3")
def build_bilm_v3(
    model: PathLike = DEFAULT_MODEL,
    stateful: bool = False,
    max_batch_tokens: PositiveInt = 4096,
    segmentation: SkipValidation[Optional[Segmenter]] = None,
    warm_start: bool = False,
    fast_mode: Optional[str] = None,
    tf32: bool = False,
    time_loop: str = AUTO,
) -> Model[InT, OutT]:
    """`spacy-elmo.BiLM.v3`: the biLM's layers per doc, `[L+1, n_tokens, 2P]`, from the one model `model`
    names, as `--model` does on every command. It is read at initialization or first use, never when the
    config is built, and a saved pipeline carries the weights, so `spacy.load` reads nothing it names. It
    learns when run for training, unless its owner froze it: the `elmo` component then never runs it so
    (its `frozen`); a head's own copy is frozen through `set_frozen`.

    model (Union[str, Path]): a bundled model's name, a catalogue model's once `python -m spacy_elmo download
        NAME` has fetched it, a model folder or archive of any format (formats.FORMATS; a folder holding
        options.json and the weights), or `hf:ORG/REPO[@REVISION]` on the Hugging Face Hub.
    stateful (bool): carry the LSTM states from batch to batch, as the original (batches keep the docs'
        order).
    max_batch_tokens (int): at most this many padded tokens per batch.
    segmentation (Optional[Segmenter]): cuts docs into the pieces the biLM reads (a registered `@misc`
        function's result); null: `spacy-elmo.sentence_windows.v1` with its defaults.
    warm_start (bool): every piece starts from a fixed warm LSTM state instead of zeros.
    fast_mode (Optional[str]): null (exact), "int8" (CPU), "bf16" (GPU, or a CPU with bf16 units) or
        "auto" (the one measured to beat exact here, else exact; logged), a fast inexact copy for
        prediction and frozen training (a biLM that learns refuses it); where it cannot run, the exact
        biLM runs, with a warning.
    tf32 (bool): TF32 products on a GPU (faster, about 1e-3 from the exact vectors); by default the biLM
        computes in full fp32 whatever torch's global flags (elmo/nn/precision.py).
    time_loop (str): how the LSTM steps through time (elmo/nn/time_loops/dispatch.py): "auto" (the device's default,
        today "step"), "step", or, experimental, "wavefront" or "captured" (the wavefront as CUDA graphs;
        on the CPU without a graph), exact as "step" is.
    RETURNS (Model[List[Doc], List[Floats3d]]): the biLM layer; a malformed reference or a bad setting is
        refused here, when the config is built; a name or path that names nothing, when it is read.
    """
    check_reference(model)
    if fast_mode is not None:
        check_fast_mode(fast_mode)
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
    layer: Model[InT, OutT] = Model(
        LAYER_NAME,
        partial(_forward, segmenter=segmenter),  # a closure: attrs must serialize, a segmenter need not
        init=_init,
        layers=[wrapper],
        dims={"nO": None},
        attrs={
            RUN_SETTINGS: RunSettings(
                stateful, max_batch_tokens, fast_mode, tf32, warm_start=warm_start, time_loop=time_loop
            ),
        },
    )
    set_source(layer, model)
    return layer


def set_source(model: Model, reference: PathLike, weights: Optional[PathLike] = None) -> None:
    """Record where the layer's weights come from, as `reference_to` takes it: one reference, or (BiLM.v2's
    `options` + `weights`, which no one reference names) an options.json and its weights file."""
    model.attrs[SOURCE] = {"model": str(reference), "weights": None if weights is None else str(weights)}


def _holder(model: Model) -> BiLMHolder:
    """The torch module inside the layer's PyTorchWrapper: the one place that knows where it sits."""
    return model.layers[0].shims[0]._model


def get_bilm(model: Model) -> Optional[BiLM]:
    """The torch BiLM inside a layer built by `bilm_layer`, or None before it is loaded."""
    return _holder(model).bilm


def set_frozen(model: Model, frozen: bool) -> None:
    """Whether the layer's biLM only predicts, also when run for training: a head's own copy
    (ElmoTok2Vec.v1, `replace_listeners`), which has no `elmo` component to decide."""
    check_learning_runs_exact(model, frozen)
    model.attrs[RUN_SETTINGS] = replace(run_settings(model), frozen=frozen)


def check_learning_runs_exact(model: Model, frozen: bool) -> None:
    """Refuse a fast mode for a biLM that learns: its fast copy is made once, from the weights of that
    moment, so the evaluations of a fine-tuning run would read stale, rounded weights without a word."""
    mode = run_settings(model).fast_mode
    if mode is not None and not frozen:
        raise FastModeError(
            f"fast_mode {mode!r} runs a frozen biLM only, and this one is fine-tuned (frozen = false), which "
            "runs exact: set fast_mode = null to fine-tune it, or frozen = true to train on a fast frozen biLM"
        )


def run_settings(model: Model) -> RunSettings:
    """The layer's settings from its config (run_settings.py: never the saved ones)."""
    return model.attrs[RUN_SETTINGS]


def set_bilm(model: Model, bilm: BiLM) -> None:
    """Put `bilm` in the layer, on the device of the layer's ops (a GPU after spacy.require_gpu())."""
    _holder(model).bilm = place_bilm(bilm)
    model.set_dim("nO", bilm.output_dim, force=True)


def _reference(model: Model) -> ModelReference:
    """The source recorded in the layer's config, resolved into a reference now (an unknown name fails)."""
    source = model.attrs[SOURCE]
    return reference_to(source["model"], source["weights"])


def load_source(model: Model, options: Optional[PathLike] = None, weights: Optional[PathLike] = None) -> None:
    """Load the biLM from the given paths (BiLM.v2 configs' [initialize.components.<elmo component>]),
    else from the source recorded in the layer's config. `options` alone may be a model directory or
    archive of any format, so that `--paths.elmo_options DIR` works with v2 configs."""
    given = options is not None or weights is not None
    reference = ModelReference().overridden(options, weights) if given else _reference(model)
    set_bilm(model, resolve(reference).load(run_settings(model).warm_start))


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


# One piece of a doc's layers as its batch is done: (doc index, the doc's rows it fills, its layers
# `[L+1, r, 2P]`, a view into the batch's output).
Piece = Tuple[int, Any, Any]
# Each doc's words the biLM reads, each piece of the docs as (doc index, segment), each doc's rows read.
_Plan = Tuple[List[List[str]], List[Tuple[int, Segment]], List[Any]]


def _plan(model: Model, docs: InT, segmenter: Segmenter) -> _Plan:
    keep = [kept_tokens(doc) for doc in docs]
    words = [[doc[int(i)].text for i in rows] for doc, rows in zip(docs, keep)]
    units = [(d, seg) for d, (doc, rows) in enumerate(zip(docs, keep)) for seg in doc_segments(segmenter, doc, rows)]
    return words, units, [model.ops.asarray1i(cast(Sequence[int], rows)) for rows in keep]


def _run(model: Model, bilm: BiLM, plan: _Plan, trainable: bool, callbacks: List[Any]) -> Iterator[Piece]:
    """Run the biLM over the planned pieces batch by batch, yielding each piece's rows as its batch is
    done; a trainable run appends each batch's backprop to `callbacks`."""
    settings = run_settings(model)
    run = RunOptions(tf32=settings.tf32, time_loop=settings.time_loop)  # per call: the torch module is shared
    wrapper = model.layers[0]
    if settings.stateful:
        PROCESS.warn_stateful_in_worker()
    words, units, rows_of = plan
    fast = None if trainable or settings.fast_mode is None else PROCESS.fast_copy(bilm, settings.fast_mode)
    lengths = [seg.end - seg.start for _, seg in units]
    for batch in plan_batches(lengths, settings.max_batch_tokens, settings.stateful):
        sentences = [words[units[u][0]][units[u][1].start : units[u][1].end] for u in batch]
        if trainable:
            layers, layers_backprop = wrapper.begin_update((sentences, settings.stateful, run))
            callbacks.append((batch, layers.shape, layers_backprop))
        elif fast is not None:
            with torch.inference_mode():
                layers = torch2xp(fast.forward_sentences(sentences, run=run).layers, ops=model.ops)
        else:
            with torch.inference_mode():
                layers = wrapper.predict((sentences, settings.stateful, run))
        for row, u in enumerate(batch):
            d, seg = units[u]
            piece = layers[:, row, seg.keep_start - seg.start : seg.keep_end - seg.start]
            yield d, rows_of[d][seg.keep_start : seg.keep_end], piece


def predict_pieces(model: Model, docs: InT) -> Iterator[Piece]:
    """The layers of `docs` for prediction, a piece at a time as each batch is done: a caller that keeps
    the rows in another form (float16) or pools them never holds a doc's float32 layers whole, as
    `predict`'s `[L+1, n, 2P]` per doc does. A piece's array is valid until the next is asked for."""
    forward = cast(partial, model._func)  # build_bilm_v2's partial of _forward, which holds the segmenter
    segmenter: Segmenter = forward.keywords["segmenter"]
    return _run(model, ensure_loaded(model), _plan(model, docs, segmenter), False, [])


def _forward(model: Model, docs: InT, is_train: bool, *, segmenter: Segmenter) -> Tuple[OutT, Callable]:
    bilm = ensure_loaded(model)
    settings = run_settings(model)
    run = RunOptions(tf32=settings.tf32, time_loop=settings.time_loop)
    ops = model.ops
    plan = _plan(model, docs, segmenter)
    _, units, rows_of = plan
    # Arrays of the ops (CuPy on a GPU), so the layers never make a host round trip.
    outputs = [ops.alloc3f(bilm.n_layers, len(doc), bilm.output_dim) for doc in docs]
    callbacks: List[Any] = []
    for d, rows, piece in _run(model, bilm, plan, is_train and not settings.frozen, callbacks):
        outputs[d][:, rows] = piece

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
