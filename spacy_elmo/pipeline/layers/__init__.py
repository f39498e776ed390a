"""thinc glue between spaCy Docs and the torch biLM: the biLM layer, the listener, the mixes and pooling,
and the read-rows rule. Files are read through the floors below (models/, formats/): the biLM's
weights when it loads, and a published module's mix when a ScalarMix starts from one."""

from .listener import ElmoListener, build_elmo_tok2vec
from .read_rows import apply_to_read_rows, mix_read_rows
from .scalar_mix import build_scalar_mix_v2, mix_summary
from .thinc_bilm import build_bilm_v2, get_bilm, load_source, set_bilm, set_frozen

__all__ = [
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
