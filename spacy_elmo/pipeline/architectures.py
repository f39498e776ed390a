"""Every registry entry (`spacy-elmo.*`) of the package, and only here. A name's newest version is
the builder itself, defined where its logic lives and named for the name and version (`build_bilm_v3` in
bilm_layer/thinc_bilm.py), documented argument by argument in spaCy's style. Changing what a released
version builds means a new version, registered here beside it, the older one kept here as a wrapper
that calls the newer (`build_bilm_v2`), so a released name keeps building what it built. The `elmo`
factory alone sits with its component (component.py), as spaCy's own do; setup.cfg's entry points name
these functions through this module (tests/pipeline/test_architectures.py)."""

from __future__ import annotations

from typing import List, Optional

from pydantic import SkipValidation
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats3d

from ..elmo.nn.run_options import AUTO
from ..elmo.sources.bundled import DEFAULT_MODEL
from ..elmo.sources.resolver import model_reference
from ..elmo.util.validation import validate_arguments
from .bilm_layer import segment, thinc_bilm
from .bilm_layer.segment import Segmenter
from .bilm_layer.thinc_bilm import PathLike, PositiveInt, set_source
from .errors import said_by_spacy
from .layers import alignment, listener, pooling, scalar_mix
from .training_log import build_mix_logger_v1 as _build_mix_logger_v1

# Each builder as registered: its errors one message under spaCy's commands (errors.said_by_spacy).
build_bilm_v3 = said_by_spacy(thinc_bilm.build_bilm_v3)
build_elmo_listener_v1 = said_by_spacy(listener.build_elmo_listener_v1)
build_elmo_tok2vec_v1 = said_by_spacy(listener.build_elmo_tok2vec_v1)
build_scalar_mix_v2 = said_by_spacy(scalar_mix.build_scalar_mix_v2)
build_pooling_v1 = said_by_spacy(pooling.build_pooling_v1)
build_aligned_pooling_v1 = said_by_spacy(alignment.build_aligned_pooling_v1)
build_sentence_windows_v1 = said_by_spacy(segment.build_sentence_windows_v1)
build_mix_logger_v1 = said_by_spacy(_build_mix_logger_v1)


@said_by_spacy
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
) -> Model[List[Doc], List[Floats3d]]:
    """`spacy-elmo.BiLM.v2`, kept for the configs that name it: `spacy-elmo.BiLM.v3` with its source given
    in four settings, `path`, else `name`, else `options` + `weights` (default: the bundled model), each
    checked as before when the config is built (an unknown `name` fails here). New configs name one
    `model` in BiLM.v3.

    options (Optional[Union[str, Path]]): an options.json, with `weights`; alone, a model folder or archive.
    weights (Optional[Union[str, Path]]): a weights.hdf5, with `options`.
    name (Optional[str]): BiLM.v3's `model` as a name.
    stateful (bool): as BiLM.v3's.
    max_batch_tokens (int): as BiLM.v3's.
    segmentation (Optional[Segmenter]): as BiLM.v3's.
    warm_start (bool): as BiLM.v3's.
    fast_mode (Optional[str]): as BiLM.v3's.
    path (Optional[Union[str, Path]]): BiLM.v3's `model` as a folder or archive.
    tf32 (bool): as BiLM.v3's.
    time_loop (str): as BiLM.v3's.
    RETURNS (Model[List[Doc], List[Floats3d]]): BiLM.v3's layer.
    """
    model_reference(options, weights, name, path)
    model = path or options or name or DEFAULT_MODEL
    layer = build_bilm_v3(model, stateful, max_batch_tokens, segmentation, warm_start, fast_mode, tf32, time_loop)
    if weights is not None:
        set_source(layer, str(options), weights)
    return layer


registry.architectures("spacy-elmo.BiLM.v2")(build_bilm_v2)
registry.architectures("spacy-elmo.BiLM.v3")(build_bilm_v3)
registry.architectures("spacy-elmo.ElmoListener.v1")(build_elmo_listener_v1)
registry.architectures("spacy-elmo.ElmoTok2Vec.v1")(build_elmo_tok2vec_v1)
registry.layers("spacy-elmo.ScalarMix.v2")(build_scalar_mix_v2)
registry.layers("spacy-elmo.Pooling.v1")(build_pooling_v1)
registry.layers("spacy-elmo.AlignedPooling.v1")(build_aligned_pooling_v1)
registry.misc("spacy-elmo.sentence_windows.v1")(build_sentence_windows_v1)
registry.loggers("spacy-elmo.MixLogger.v1")(build_mix_logger_v1)
