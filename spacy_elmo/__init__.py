"""ELMo (Peters et al. 2018) for spaCy: the biLM in PyTorch, exact to the published weights."""

from typing import Any

from .formats import WeightsError, load_weights, save_weights
from .models import load_bilm
from .nn.bilm import BiLM, BiLMOutput
from .nn.chars import CharacterMapper, batch_to_ids
from .nn.options import ElmoOptions, OptionsError, preset

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # spaCy is imported only by what needs it: the biLM, the weights and pretraining run without it
    # (`python -m spacy_elmo pretrain` on a training machine needs torch, h5py and the config library).
    if name == "restore_vectors":
        from .pipeline.hooks import restore_vectors

        return restore_vectors
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
