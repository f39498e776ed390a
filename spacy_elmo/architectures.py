"""Registry entries (`spacy-elmo.*`): the builders of layers/ and segment.py registered as they are,
two thin functions that combine them, and the legacy `BiLM.v1` that reads configs written before
segmentation became a registered function."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Union

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from .layers import ElmoListener, bilm_layer, build_elmo_tok2vec, scalar_mix, set_frozen
from .layers.pooling import pooling_layer
from .layers.scalar_mix import scalar_mix_v2
from .segment import sentence_windows

# The builders are the registry functions: their parameters, defaults and docs live in one place.
BiLM_v2 = registry.architectures("spacy-elmo.BiLM.v2")(bilm_layer)
sentence_windows_v1 = registry.misc("spacy-elmo.sentence_windows.v1")(sentence_windows)
ScalarMix_v1 = registry.layers("spacy-elmo.ScalarMix.v1")(scalar_mix)
ScalarMix_v2 = registry.layers("spacy-elmo.ScalarMix.v2")(scalar_mix_v2)
Pooling_v1 = registry.layers("spacy-elmo.Pooling.v1")(pooling_layer)


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
    set_frozen(bilm, frozen)
    return build_elmo_tok2vec(bilm, mix, extra_features, width)


@registry.architectures("spacy-elmo.BiLM.v1")
def BiLM_v1(
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
    """Legacy: `BiLM.v2` with its three segmentation settings flat, so that configs and saved pipelines
    from before `spacy-elmo.sentence_windows.v1` still load. New configs use `BiLM.v2`."""
    return bilm_layer(
        options,
        weights,
        name,
        stateful,
        max_batch_tokens,
        sentence_windows(split_sentences, max_length, overlap),
        warm_start,
        fast_mode,
    )
