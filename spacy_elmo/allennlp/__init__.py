"""AllenNLP's ELMo API over this package's biLM, for code that imported it from `allennlp`: `Elmo` and
`batch_to_ids` (`allennlp.modules.elmo`, 0.9 and 2.x), `ElmoEmbedder` (0.9's `allennlp.commands.elmo`)
and `ScalarMix`. Torch only, no spaCy; names are imported from their modules on first use."""

from typing import TYPE_CHECKING

from ..elmo.util.lazy import lazy_names

if TYPE_CHECKING:
    from .elmo import Elmo as Elmo
    from .elmo import batch_to_ids as batch_to_ids
    from .embedder import ElmoEmbedder as ElmoEmbedder
    from .scalar_mix import ScalarMix as ScalarMix

__getattr__, __dir__, __all__ = lazy_names(
    __name__,
    {".elmo": ["Elmo", "batch_to_ids"], ".embedder": ["ElmoEmbedder"], ".scalar_mix": ["ScalarMix"]},
)
