"""A byte-bounded LRU of biLM activations, so a frozen biLM runs once per distinct training doc.

Keyed by the doc's token strings: a stateless frozen biLM's output depends on nothing else.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Dict, Hashable, Optional

import numpy as np

from ..errors import ElmoError


class ActivationCache:
    """Thread-safe (one lock around each operation): an eviction by one thread between another's lookup
    and its move to the end would otherwise raise a KeyError."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ElmoError(f"the activation cache budget must not be negative, got {max_bytes} bytes")
        self.max_bytes = max_bytes
        self.n_bytes = 0
        self.hits = 0
        self.misses = 0
        self._items: "OrderedDict[Hashable, Any]" = OrderedDict()  # NumPy or CuPy arrays
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def __getstate__(self) -> Dict[str, Any]:
        """Copies and pickles (`copy.deepcopy` of a biLM or pipe) get a lock of their own."""
        return {key: value for key, value in self.__dict__.items() if key != "_lock"}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Optional[Any]:
        with self._lock:
            value = self._items.get(key)
            if value is None:
                self.misses += 1
                return None
            self.hits += 1
            self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        """Store a read-only reference; the oldest entries go first when the budget is exceeded."""
        if value.nbytes > self.max_bytes:
            return
        if isinstance(value, np.ndarray):  # CuPy arrays (on a GPU) have no write flag
            value.setflags(write=False)
        with self._lock:
            if key in self._items:
                return
            self._items[key] = value
            self.n_bytes += value.nbytes
            while self.n_bytes > self.max_bytes:
                _, old = self._items.popitem(last=False)
                self.n_bytes -= old.nbytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.n_bytes = 0
