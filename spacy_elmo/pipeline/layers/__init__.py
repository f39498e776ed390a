"""thinc glue between spaCy Docs and the torch biLM: the listener, the mixes and pooling, and the
read-rows rule (the biLM layer and its parts are in bilm_layer/; this face gives its functions too).
Files are read through the floors below (elmo/sources/, elmo/formats/): the biLM's weights when it loads, and a
published module's mix when a ScalarMix starts from one."""

from ..bilm_layer.thinc_bilm import build_bilm_v2, get_bilm, load_source, set_bilm, set_frozen
from .listener import ElmoListener, build_elmo_tok2vec
from .read_rows import apply_to_read_rows, mix_read_rows
from .scalar_mix import build_scalar_mix_v2, mix_summary

__all__ = [
    "ElmoListener",
    "apply_to_read_rows",
    "build_bilm_v2",
    "build_elmo_tok2vec",
    "build_scalar_mix_v2",
    "get_bilm",
    "load_source",
    "mix_read_rows",
    "mix_summary",
    "set_bilm",
    "set_frozen",
]
