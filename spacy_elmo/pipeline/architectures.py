"""Every registry entry (`spacy-elmo.*`) of the package, and only here. A name's newest version is
the builder itself, defined where its logic lives and named for the name and version (`build_bilm_v2` in
bilm_layer/thinc_bilm.py), documented argument by argument in spaCy's style; an older version is a wrapper
here that calls the newer one, so an existing name keeps building what it built. Changing what a newest
version builds means a new version, registered here beside it. The `elmo` factory alone sits with its
component (component.py), as spaCy's own do; setup.cfg's entry points name these functions through this
module (tests/pipeline/test_architectures.py)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Union

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d, Floats3d
from typing_extensions import Annotated

from ..util.validation import Float32, must_be, validate_arguments
from .bilm_layer.segment import build_sentence_windows_v1
from .bilm_layer.thinc_bilm import PositiveInt, build_bilm_v2
from .layers.alignment import build_aligned_pooling_v1
from .layers.listener import build_elmo_listener_v1, build_elmo_tok2vec_v1
from .layers.pooling import build_pooling_v1
from .layers.scalar_mix import DropoutRate, Penalty, build_scalar_mix_v2
from .training_log import build_mix_logger_v1

registry.architectures("spacy-elmo.BiLM.v2")(build_bilm_v2)
registry.architectures("spacy-elmo.ElmoListener.v1")(build_elmo_listener_v1)
registry.architectures("spacy-elmo.ElmoTok2Vec.v1")(build_elmo_tok2vec_v1)
registry.layers("spacy-elmo.ScalarMix.v2")(build_scalar_mix_v2)
registry.layers("spacy-elmo.Pooling.v1")(build_pooling_v1)
registry.layers("spacy-elmo.AlignedPooling.v1")(build_aligned_pooling_v1)
registry.misc("spacy-elmo.sentence_windows.v1")(build_sentence_windows_v1)
registry.loggers("spacy-elmo.MixLogger.v1")(build_mix_logger_v1)


@registry.architectures("spacy-elmo.BiLM.v1")
@validate_arguments("spacy-elmo.BiLM.v1")
def build_bilm_v1(
    options: Optional[Union[str, Path]] = None,
    weights: Optional[Union[str, Path]] = None,
    name: Optional[str] = None,
    stateful: bool = False,
    max_batch_tokens: PositiveInt = 4096,
    split_sentences: bool = True,
    max_length: PositiveInt = 256,
    overlap: Annotated[int, must_be("an integer >= 0", ge=0)] = 32,
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


@registry.layers("spacy-elmo.ScalarMix.v1")
@validate_arguments("spacy-elmo.ScalarMix.v1")
def build_scalar_mix_v1(
    weights: Optional[Sequence[Float32]] = None,
    gamma: Float32 = 1.0,
    layer_norm: bool = False,
    dropout: DropoutRate = 0.0,
    l2: Penalty = 0.0,
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
