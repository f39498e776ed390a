"""thinc glue between spaCy Docs and the torch biLM; nothing here reads HDF5 directly."""

from .cache import ActivationCache
from .listener import ElmoListener, build_elmo_tok2vec
from .read_rows import apply_to_read_rows, mix_read_rows
from .scalar_mix import build_scalar_mix_v2, mix_summary
from .thinc_bilm import build_bilm_v2, get_bilm, load_source, set_bilm, set_frozen

__all__ = [
    "ActivationCache",
    "ElmoListener",
    "apply_to_read_rows",
    "build_bilm_v2",
    "build_elmo_tok2vec",
    "get_bilm",
    "load_source",
    "mix_summary",
    "mix_read_rows",
    "build_scalar_mix_v2",
    "set_bilm",
    "set_frozen",
]
