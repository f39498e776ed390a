"""Every registry entry (`spacy-elmo.*`) of the package, and only here: one versioned function per
registered name, documented argument by argument, calling the builders of bilm_layer/, layers/ and
training_log.py by keyword, which register nothing. An older version calls the newer one, so an existing
name keeps building what it built. The `elmo` factory alone sits with its component (component.py), as
spaCy's own do; setup.cfg's entry points name these functions (tests/pipeline/test_architectures.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional, Sequence, Union

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from ..nn.pooling_weights import PoolingWeights
from .bilm_layer.segment import Segmenter, sentence_windows
from .bilm_layer.thinc_bilm import bilm_layer
from .layers import ElmoListener, build_elmo_tok2vec, set_frozen
from .layers.alignment import aligned_pooling
from .layers.pooling import pooling_layer
from .layers.scalar_mix import scalar_mix
from .training_log import console_and_mixes


@registry.architectures("spacy-elmo.BiLM.v2")
def build_bilm_v2(
    options: Optional[Union[str, Path]] = None,
    weights: Optional[Union[str, Path]] = None,
    name: Optional[str] = None,
    stateful: bool = False,
    max_batch_tokens: int = 4096,
    segmentation: Optional[Segmenter] = None,
    warm_start: bool = False,
    fast_mode: Optional[str] = None,
    path: Optional[Union[str, Path]] = None,
    tf32: bool = False,
) -> Model[List[Doc], List[Floats3d]]:
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
    fast_mode (Optional[str]): null (exact), "int8" (CPU) or "bf16" (GPU), a fast inexact copy for
        prediction and frozen training; where it cannot run, the exact biLM runs, with a warning.
    path (Optional[Union[str, Path]]): a model directory or archive of any format (formats.FORMATS).
    tf32 (bool): TF32 products on a GPU (faster, about 1e-3 from the exact vectors); by default the biLM
        computes in full fp32 whatever torch's global flags (nn/precision.py).
    RETURNS (Model[List[Doc], List[Floats3d]]): the biLM layer.
    """
    return bilm_layer(
        options=options,
        weights=weights,
        name=name,
        stateful=stateful,
        max_batch_tokens=max_batch_tokens,
        segmentation=segmentation,
        warm_start=warm_start,
        fast_mode=fast_mode,
        path=path,
        tf32=tf32,
    )


@registry.architectures("spacy-elmo.BiLM.v1")
def build_bilm_v1(
    options: Optional[Union[str, Path]] = None,
    weights: Optional[Union[str, Path]] = None,
    name: Optional[str] = None,
    stateful: bool = False,
    max_batch_tokens: int = 4096,
    split_sentences: bool = True,
    max_length: int = 256,
    overlap: int = 32,
    warm_start: bool = False,
    fast_mode: Optional[str] = None,
) -> Model[List[Doc], List[Floats3d]]:
    """Legacy: `BiLM.v2` with its segmentation settings flat, so that configs and saved pipelines from
    before `spacy-elmo.sentence_windows.v1` still load. New configs use `BiLM.v2`.

    options (Optional[Union[str, Path]]): as in `BiLM.v2`.
    weights (Optional[Union[str, Path]]): as in `BiLM.v2`.
    name (Optional[str]): as in `BiLM.v2`.
    stateful (bool): as in `BiLM.v2`.
    max_batch_tokens (int): as in `BiLM.v2`.
    split_sentences (bool): as in `sentence_windows.v1`.
    max_length (int): as in `sentence_windows.v1`.
    overlap (int): as in `sentence_windows.v1`.
    warm_start (bool): as in `BiLM.v2`.
    fast_mode (Optional[str]): as in `BiLM.v2`.
    RETURNS (Model[List[Doc], List[Floats3d]]): the biLM layer.
    """
    return build_bilm_v2(
        options=options,
        weights=weights,
        name=name,
        stateful=stateful,
        max_batch_tokens=max_batch_tokens,
        segmentation=build_sentence_windows_v1(split_sentences=split_sentences, max_length=max_length, overlap=overlap),
        warm_start=warm_start,
        fast_mode=fast_mode,
    )


@registry.misc("spacy-elmo.sentence_windows.v1")
def build_sentence_windows_v1(split_sentences: bool = True, max_length: int = 256, overlap: int = 32) -> Segmenter:
    """The biLM reads a doc per sentence and long pieces in overlapping windows.

    split_sentences (bool): one piece per sentence where the doc has sentence boundaries (parser,
        `senter`, `sentencizer` or `sent_starts`).
    max_length (int): pieces longer than this many tokens are read in windows; set it high to read long
        unsegmented docs whole (memory grows with it).
    overlap (int): tokens shared by neighbouring windows, as context on each side.
    RETURNS (Segmenter): the segmenter `BiLM.v2`'s `segmentation` takes.
    """
    return sentence_windows(split_sentences=split_sentences, max_length=max_length, overlap=overlap)


@registry.layers("spacy-elmo.ScalarMix.v2")
def build_scalar_mix_v2(
    weights: Optional[Sequence[float]] = None,
    start_from: Optional[str] = None,
    gamma: float = 1.0,
    layer_norm: bool = False,
    dropout: float = 0.0,
    l2: float = 0.0,
    trainable: bool = True,
) -> Model[List[Floats3d], List[Floats2d]]:
    """The paper's task-specific mix: gamma * sum_j softmax(w)_j * layer_j.

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
    return scalar_mix(
        weights=weights,
        start_from=start_from,
        gamma=gamma,
        layer_norm=layer_norm,
        dropout=dropout,
        l2=l2,
        trainable=trainable,
    )


@registry.layers("spacy-elmo.ScalarMix.v1")
def build_scalar_mix_v1(
    weights: Optional[Sequence[float]] = None,
    gamma: float = 1.0,
    layer_norm: bool = False,
    dropout: float = 0.0,
    l2: float = 0.0,
    trainable: bool = True,
) -> Model[List[Floats3d], List[Floats2d]]:
    """The first version of the layer mix: `ScalarMix.v2` without `start_from`.

    weights (Optional[Sequence[float]]): pre-softmax layer weights, token layer first; null: the mean.
    gamma (float): the initial scale.
    layer_norm (bool): normalise each layer over the batch before mixing.
    dropout (float): the mix's own dropout rate in training, in [0, 1).
    l2 (float): the L2 penalty on the raw weights, >= 0.
    trainable (bool): whether `weights` and `gamma` learn.
    RETURNS (Model[List[Floats3d], List[Floats2d]]): each doc's layers -> one vector per token.
    """
    return build_scalar_mix_v2(
        weights=weights, gamma=gamma, layer_norm=layer_norm, dropout=dropout, l2=l2, trainable=trainable
    )


@registry.layers("spacy-elmo.Pooling.v1")
def build_pooling_v1(weights: PoolingWeights = "mean") -> Model[List[Floats3d], List[Floats2d]]:
    """Fixed pooling of the biLM's layers: what `token.vector` and `doc.tensor` are.

    weights (Union[str, Sequence[float]]): "mean", "top" (the last LSTM layer) or one number per layer,
        token layer first (not normalised).
    RETURNS (Model[List[Floats3d], List[Floats2d]]): each doc's layers -> one vector per token.
    """
    return pooling_layer(weights=weights)


@registry.layers("spacy-elmo.AlignedPooling.v1")
def build_aligned_pooling_v1(alignment: str, weights: PoolingWeights = "mean") -> Model[List[Floats3d], List[Floats2d]]:
    """Fixed pooling, then a published cross-lingual alignment (Schuster et al. 2019): every token vector
    `v` becomes `W v`, in English's space, so that vectors of several languages' models compare. Give it
    as the `elmo` component's `pooling`.

    alignment (str): the matrix: a downloaded catalogue model's name (`schuster-aligned-de`), a model
        directory holding `alignment.pth`, or a torch-saved `[D, D]` matrix file. Read at
        `nlp.initialize()` or first use, and saved with the pipeline.
    weights (Union[str, Sequence[float]]): the pooling before the alignment, as in `spacy-elmo.Pooling.v1`;
        `[0, 1, 0]` (the first LSTM layer, which the published matrices were fitted on) is the paper's.
    RETURNS (Model[List[Floats3d], List[Floats2d]]): each doc's layers -> one aligned vector per token.
    """
    return aligned_pooling(alignment=alignment, weights=weights)


@registry.architectures("spacy-elmo.ElmoListener.v1")
def build_elmo_listener_v1(
    mix: Model[List[Floats3d], List[Floats2d]],
    upstream: str = "elmo",
    extra_features: Optional[Model[List[Doc], List[Floats2d]]] = None,
    width: Optional[int] = None,
) -> Model[List[Doc], List[Floats2d]]:
    """A head's tok2vec, fed by an `elmo` component's biLM layers.

    mix (Model[List[Floats3d], List[Floats2d]]): the head's own pooling of the layers (`ScalarMix.v1`).
    upstream (str): the `elmo` component to listen to; "*" for any.
    extra_features (Optional[Model[List[Doc], List[Floats2d]]]): token features concatenated with ELMo's.
    width (Optional[int]): project the result to this width; null keeps it.
    RETURNS (Model[List[Doc], List[Floats2d]]): one vector per token.
    """
    return build_elmo_tok2vec(source=ElmoListener(upstream), mix=mix, extra_features=extra_features, width=width)


@registry.architectures("spacy-elmo.ElmoTok2Vec.v1")
def build_elmo_tok2vec_v1(
    bilm: Model[List[Doc], List[Floats3d]],
    mix: Model[List[Floats3d], List[Floats2d]],
    extra_features: Optional[Model[List[Doc], List[Floats2d]]] = None,
    width: Optional[int] = None,
    frozen: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """The listener's standalone twin, holding its own biLM (what `replace_listeners` produces).

    bilm (Model[List[Doc], List[Floats3d]]): the biLM layer (`BiLM.v2`).
    mix (Model[List[Floats3d], List[Floats2d]]): as in `ElmoListener.v1`.
    extra_features (Optional[Model[List[Doc], List[Floats2d]]]): as in `ElmoListener.v1`.
    width (Optional[int]): as in `ElmoListener.v1`.
    frozen (bool): the biLM gets no gradient; False fine-tunes it with the head.
    RETURNS (Model[List[Doc], List[Floats2d]]): one vector per token.
    """
    set_frozen(bilm, frozen)
    return build_elmo_tok2vec(source=bilm, mix=mix, extra_features=extra_features, width=width)


@registry.loggers("spacy-elmo.MixLogger.v1")
def build_mix_logger_v1(progress_bar: Optional[str] = None) -> Callable:
    """spaCy's console logger, plus every head's layer mix at each evaluation.

    progress_bar (Optional[str]): as in `spacy.ConsoleLogger.v3`: null, "train" or "eval".
    RETURNS (Callable): the logger's setup function, as `[training.logger]` takes it.
    """
    return console_and_mixes(progress_bar=progress_bar)
