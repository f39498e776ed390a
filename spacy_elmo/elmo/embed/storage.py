"""How `dump` stores each dataset: float32 (the original's) or float16, and on request one of h5py's
own compression filters, gzip (with a level) or lzf, each behind the shuffle filter (float bytes
grouped by significance compress better). Readers need nothing but h5py: both filters ship with it.
A compressed file is written in HDF5 1.10's format (readable by HDF5 1.10 and later): its single-chunk
index, where the older format gives every filtered dataset a B-tree that outweighs a line's vector."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

import numpy as np

from ..errors import InputError

DTYPES = ("float32", "float16")
COMPRESSIONS = ("gzip", "lzf")


@dataclass(frozen=True)
class Storage:
    """`dtype`: "float32" or "float16"; `compression`: None, "gzip" or "lzf"; `level`: gzip's 0-9
    (None: h5py's default, 4)."""

    dtype: str = "float32"
    compression: Optional[str] = None
    level: Optional[int] = None

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise InputError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if self.compression is not None and self.compression not in COMPRESSIONS:
            raise InputError(f"compression {self.compression!r} is not one of {', '.join(COMPRESSIONS)} (or none)")
        if self.level is not None and (self.compression != "gzip" or not 0 <= self.level <= 9):
            raise InputError(f"a compression level ({self.level}) is gzip's, 0 to 9: give --compression gzip with it")

    def file(self) -> Dict[str, Any]:
        """`h5py.File`'s keyword arguments: the format bound of a compressed file; none otherwise, so
        the default file stays the original's."""
        return {} if self.compression is None else {"libver": ("v110", "v110")}

    def dataset(self, data: np.ndarray) -> Dict[str, Any]:
        """`create_dataset`'s keyword arguments for `data`. An empty array has no chunk to filter, so
        it is stored plain."""
        options: Dict[str, Any] = {"data": data.astype(self.dtype, copy=False)}
        if self.compression is not None and data.size:
            options.update(compression=self.compression, shuffle=True)
            if self.level is not None:
                options["compression_opts"] = self.level
        return options
