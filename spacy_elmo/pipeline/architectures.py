"""Every registry entry (`spacy-elmo.*`) of the package, and only here. A name's newest version is
the builder itself, defined where its logic lives and named for the name and version (`build_bilm_v2` in
bilm_layer/thinc_bilm.py), documented argument by argument in spaCy's style. Changing what a released
version builds means a new version, registered here beside it, the older one kept as a wrapper that calls
the newer, so a released name keeps building what it built. The `elmo` factory alone sits with its
component (component.py), as spaCy's own do; setup.cfg's entry points name these functions through this
module (tests/pipeline/test_architectures.py)."""

from __future__ import annotations

from spacy.util import registry

from .bilm_layer.segment import build_sentence_windows_v1
from .bilm_layer.thinc_bilm import build_bilm_v2
from .layers.alignment import build_aligned_pooling_v1
from .layers.listener import build_elmo_listener_v1, build_elmo_tok2vec_v1
from .layers.pooling import build_pooling_v1
from .layers.scalar_mix import build_scalar_mix_v2
from .training_log import build_mix_logger_v1

registry.architectures("spacy-elmo.BiLM.v2")(build_bilm_v2)
registry.architectures("spacy-elmo.ElmoListener.v1")(build_elmo_listener_v1)
registry.architectures("spacy-elmo.ElmoTok2Vec.v1")(build_elmo_tok2vec_v1)
registry.layers("spacy-elmo.ScalarMix.v2")(build_scalar_mix_v2)
registry.layers("spacy-elmo.Pooling.v1")(build_pooling_v1)
registry.layers("spacy-elmo.AlignedPooling.v1")(build_aligned_pooling_v1)
registry.misc("spacy-elmo.sentence_windows.v1")(build_sentence_windows_v1)
registry.loggers("spacy-elmo.MixLogger.v1")(build_mix_logger_v1)
