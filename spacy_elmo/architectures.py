"""Registry entries (`spacy-elmo.*.v1`): the builders of layers/ registered as they are, and two thin
functions that combine them."""

from __future__ import annotations

from typing import List, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d, Floats3d

from .layers import ElmoListener, bilm_layer, build_elmo_tok2vec, scalar_mix, set_frozen
from .layers.pooling import pooling_layer

# The builders are the registry functions: their parameters, defaults and docs live in one place.
BiLM_v1 = registry.architectures("spacy-elmo.BiLM.v1")(bilm_layer)
ScalarMix_v1 = registry.layers("spacy-elmo.ScalarMix.v1")(scalar_mix)
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
