"""thinc glue between spaCy Docs and the torch biLM; nothing here reads HDF5 directly."""

from .cache import ActivationCache
from .listener import ElmoListener, build_elmo_tok2vec
from .scalar_mix import mix_summary, scalar_mix
from .thinc_bilm import bilm_layer, get_bilm, load_source, set_bilm, set_frozen

__all__ = [
    "ActivationCache",
    "ElmoListener",
    "bilm_layer",
    "build_elmo_tok2vec",
    "get_bilm",
    "load_source",
    "mix_summary",
    "scalar_mix",
    "set_bilm",
    "set_frozen",
]
