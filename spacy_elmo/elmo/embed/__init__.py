"""Embedding text files and datasets in bulk: the HDF5 dump of one file (`hdf5`), the same over many
files on a Ray cluster (`ray_dump`, with its `manifest`), and a Ray Data callable (`ray_data`).
Ray is optional: only `ray_dump` imports it, when it runs."""

from .hdf5 import LayersWritten, check_has_tokens, write_layers
from .manifest import Manifest, Shard
from .ray_data import ElmoEmbedder
from .ray_dump import dump_on_ray

__all__ = [
    "ElmoEmbedder",
    "LayersWritten",
    "Manifest",
    "Shard",
    "check_has_tokens",
    "dump_on_ray",
    "write_layers",
]
