"""A byte-bounded LRU of biLM activations, so a frozen biLM runs once per distinct training doc.

Keyed by the doc's token strings: a stateless frozen biLM's output depends on nothing else.
"""

from __future__ import annotations

from typing import Any, Hashable

import numpy as np

from ...nn.lru import LRU


def _nbytes(value: Any) -> int:
    return int(value.nbytes)


class ActivationCache(LRU[Hashable, Any]):
    """Layers (NumPy, or CuPy on a GPU) by key, at most `max_bytes` of them; thread-safe (nn/lru.py)."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(max_bytes, size_of=_nbytes, what="activation cache budget in bytes (the elmo cache_mb)")

    def put(self, key: Hashable, value: Any) -> None:
        """Store a read-only reference; the oldest entries go first when the budget is exceeded."""
        if isinstance(value, np.ndarray):  # CuPy arrays (on a GPU) have no write flag
            value.setflags(write=False)
        self.put_many(((key, value),))
