"""ELMo (Peters et al. 2018) for spaCy: the biLM in PyTorch, exact to the published weights.

Every name is imported from its module on first use (util/lazy.py): `import spacy_elmo` and
`python -m spacy_elmo --help` load neither torch nor spaCy; the biLM, the weights and pretraining run
without spaCy, which only `restore_vectors` (and the `elmo` component) import."""

from typing import TYPE_CHECKING

from .util.lazy import lazy_names

if TYPE_CHECKING:
    from .formats import WeightsError as WeightsError
    from .formats import load_weights as load_weights
    from .formats import save_weights as save_weights
    from .models import load_bilm as load_bilm
    from .nn.bilm import BiLM as BiLM
    from .nn.bilm import BiLMOutput as BiLMOutput
    from .nn.chars import CharacterMapper as CharacterMapper
    from .nn.chars import batch_to_ids as batch_to_ids
    from .nn.options import ElmoOptions as ElmoOptions
    from .nn.options import OptionsError as OptionsError
    from .nn.options import preset as preset
    from .pipeline.hooks import restore_vectors as restore_vectors

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_names(
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
