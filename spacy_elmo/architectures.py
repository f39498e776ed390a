"""Registry entries (`spacy-elmo.*.v1`): thin functions that build the thinc models in layers/."""
from __future__ import annotations

from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from .layers import ElmoListener, bilm_layer, build_elmo_tok2vec, scalar_mix


@registry.architectures("spacy-elmo.BiLM.v1")
def BiLM_v1(
    options: Optional[str] = None,
    weights: Optional[str] = None,
    name: Optional[str] = None,
    stateful: bool = False,
    max_batch_tokens: int = 4096,
    split_sentences: bool = True,
    max_length: int = 256,
    overlap: int = 32,
    warm_start: bool = False,
    fast_mode: Optional[str] = None,
) -> Model[List[Doc], List[Floats3d]]:
    """The biLM's layers per doc: a bundled model by `name`, or `options` + `weights` paths (read at
    initialization or first use, never when the config is built). Docs go in per sentence when they
    have sentence boundaries, pieces longer than `max_length` tokens in windows overlapping by `overlap`.
    `warm_start`: every piece starts from a fixed warm LSTM state instead of zeros (BiLM.set_warm_start).
    `fast_mode`: null (exact) or "int8", a faster inexact copy for prediction and frozen training."""
    return bilm_layer(options, weights, name, stateful=stateful, max_batch_tokens=max_batch_tokens,
                      split_sentences=split_sentences, max_length=max_length, overlap=overlap,
                      warm_start=warm_start, fast_mode=fast_mode)


@registry.layers("spacy-elmo.ScalarMix.v1")
def ScalarMix_v1(
    weights: Optional[List[float]] = None,
    gamma: float = 1.0,
    layer_norm: bool = False,
    dropout: float = 0.0,
    l2: float = 0.0,
    trainable: bool = True,
) -> Model[List[Floats3d], List[Floats2d]]:
    return scalar_mix(weights, gamma, layer_norm=layer_norm, dropout=dropout, l2=l2, trainable=trainable)


@registry.architectures("spacy-elmo.ElmoListener.v1")
def ElmoListener_v1(
    mix: Model[List[Floats3d], List[Floats2d]],
    upstream: str = "elmo",
    extra_features: Optional[Model[List[Doc], List[Floats2d]]] = None,
    width: Optional[int] = None,
) -> Model[List[Doc], List[Floats2d]]:
    """A tok2vec for a head, fed by the `elmo` component named `upstream` ("*" for any)."""
    return build_elmo_tok2vec(ElmoListener(upstream), mix, extra_features, width)


@registry.architectures("spacy-elmo.ElmoTok2Vec.v1")
def ElmoTok2Vec_v1(
    bilm: Model[List[Doc], List[Floats3d]],
    mix: Model[List[Floats3d], List[Floats2d]],
    extra_features: Optional[Model[List[Doc], List[Floats2d]]] = None,
    width: Optional[int] = None,
    frozen: bool = True,
) -> Model[List[Doc], List[Floats2d]]:
    """The listener's standalone twin, holding its own biLM (what `replace_listeners` produces)."""
    bilm.attrs["frozen"] = frozen
    return build_elmo_tok2vec(bilm, mix, extra_features, width)
