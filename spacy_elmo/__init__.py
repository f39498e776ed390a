"""ELMo (Peters et al. 2018) for spaCy: the biLM in PyTorch, exact to the published weights.

Every name is imported from its module on first use (util/lazy.py): `import spacy_elmo` and
`python -m spacy_elmo --help` load neither torch nor spaCy; the biLM, the weights and pretraining run
without spaCy, which only `restore_vectors` (and the `elmo` component) import."""

from typing import TYPE_CHECKING

from .util.lazy import lazy_names

if TYPE_CHECKING:
    from .formats import WeightsError, load_weights, save_weights
    from .models import load_bilm
    from .nn.bilm import BiLM, BiLMOutput
    from .nn.chars import CharacterMapper, batch_to_ids
    from .nn.options import ElmoOptions, OptionsError, preset
    from .pipeline.hooks import restore_vectors

__version__ = "0.1.0"

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        ".formats": ["WeightsError", "load_weights", "save_weights"],
        ".models": ["load_bilm"],
        ".nn.bilm": ["BiLM", "BiLMOutput"],
        ".nn.chars": ["CharacterMapper", "batch_to_ids"],
        ".nn.options": ["ElmoOptions", "OptionsError", "preset"],
        ".pipeline.hooks": ["restore_vectors"],
    },
)

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
