"""ELMo (Peters et al. 2018) for spaCy: the biLM in PyTorch, exact to the published weights.

Every name is imported from its module on first use (elmo/util/lazy.py): `import spacy_elmo` and
`python -m spacy_elmo --help` load neither torch nor spaCy; the biLM, the weights and pretraining run
without spaCy, which only `restore_vectors` (and the `elmo` component) import."""

from typing import TYPE_CHECKING

from .elmo import __version__ as __version__
from .elmo.util.lazy import lazy_names

if TYPE_CHECKING:
    from .elmo.formats import WeightsError as WeightsError
    from .elmo.formats import load_weights as load_weights
    from .elmo.formats import save_weights as save_weights
    from .elmo.nn.bilm import BiLM as BiLM
    from .elmo.nn.bilm import BiLMOutput as BiLMOutput
    from .elmo.nn.chars import CharacterMapper as CharacterMapper
    from .elmo.nn.chars import batch_to_ids as batch_to_ids
    from .elmo.nn.options import ElmoOptions as ElmoOptions
    from .elmo.nn.options import OptionsError as OptionsError
    from .elmo.nn.options import preset as preset
    from .elmo.sources import load_bilm as load_bilm
    from .pipeline.hooks import restore_vectors as restore_vectors


__getattr__, __dir__, __all__ = lazy_names(
    __name__,
    {
        ".elmo.formats": ["WeightsError", "load_weights", "save_weights"],
        ".elmo.sources": ["load_bilm"],
        ".elmo.nn.bilm": ["BiLM", "BiLMOutput"],
        ".elmo.nn.chars": ["CharacterMapper", "batch_to_ids"],
        ".elmo.nn.options": ["ElmoOptions", "OptionsError", "preset"],
        ".pipeline.hooks": ["restore_vectors"],
    },
)
