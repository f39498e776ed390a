"""ELMo (Peters et al. 2018) for spaCy: the biLM in PyTorch, exact to the published weights."""
from .chars import CharacterMapper, batch_to_ids
from .hooks import restore_vectors
from .nn.bilm import BiLM, BiLMOutput
from .options import ElmoOptions, OptionsError, preset
from .weights import WeightsError, load_bilm, load_weights, save_weights

__version__ = "0.1.0"

__all__ = [
    "BiLM",
    "BiLMOutput",
    "CharacterMapper",
    "ElmoOptions",
    "OptionsError",
    "WeightsError",
    "batch_to_ids",
    "load_bilm",
    "load_weights",
    "preset",
    "restore_vectors",
    "save_weights",
]
