"""Embedding text files and datasets in bulk: the HDF5 dump of one file (`hdf5`), the same over many
files on a Ray cluster (`ray_dump`, with its `manifest`), and a Ray Data callable (`ray_data.ElmoBatchMapper`).
Ray is optional: only `ray_dump` imports it, when it runs."""

from .hdf5 import LayersWritten, check_has_tokens, write_layers
from .manifest import Manifest, Shard
from .ray_data import ElmoBatchMapper
from .ray_dump import dump_on_ray

__all__ = [
    "ElmoBatchMapper",
    "LayersWritten",
    "Manifest",
    "Shard",
    "check_has_tokens",
    "dump_on_ray",
    "write_layers",
]

RENAMED = {"ElmoEmbedder": "ElmoBatchMapper"}


def __getattr__(name: str) -> object:
    """A name this package had before, renamed: an error naming the new one (AllenNLP's `ElmoEmbedder`,
    a different class, is `spacy_elmo.allennlp.ElmoEmbedder`)."""
    if name in RENAMED:
        raise ImportError(
            f"spacy_elmo.elmo.embed.{name} is now {RENAMED[name]} (the Ray Data callable); "
            f"AllenNLP's ElmoEmbedder is spacy_elmo.allennlp.ElmoEmbedder"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
