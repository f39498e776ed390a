"""The one least-recently-used cache of the package: cachetools' `LRUCache` (count- or size-bounded) behind a
lock, since threads sharing a pipeline share its caches and cachetools is not thread-safe.

The lock guards single table operations only, never the work that computes a missing value, so threads
compute in parallel; callers answer from the values they collected, so another thread's eviction cannot
take a value from under them.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Generic, Hashable, Iterable, Optional, Sequence, Tuple, TypeVar

from cachetools import LRUCache

from ..errors import InputError

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most `capacity` entries, or with `size_of` entries whose sizes sum to at most `capacity`; an entry
    larger than the whole capacity is not kept. Pickles and deep-copies with its entries and a new lock.

    capacity (int): the bound, >= 0 (0 keeps nothing).
    size_of (Optional[Callable[[V], int]]): an entry's size (a module-level function, so that the cache
        pickles); None counts entries.
    what (str): what `capacity` is, for the error a negative one raises.
    """

    def __init__(self, capacity: int, size_of: Optional[Callable[[V], int]] = None, what: str = "capacity") -> None:
        if capacity < 0:
            raise InputError(f"the {what} must not be negative, got {capacity}")
        self._table: LRUCache = LRUCache(capacity, getsizeof=size_of)
        self._size_of = size_of
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def capacity(self) -> int:
        return int(self._table.maxsize)

    @property
    def size(self) -> int:
        """The entries' total size (their number without `size_of`)."""
        return int(self._table.currsize)

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, key: object) -> bool:
        """Whether `key` is present; neither a hit nor a miss, and its entry's recency is left as it is."""
        return key in self._table

    def __getstate__(self) -> Dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != "_lock"}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def get(self, key: K) -> Optional[V]:
        """The value of `key`, now the most recently used, or None."""
        return self.get_many((key,)).get(key)

    def get_many(self, keys: Sequence[K]) -> Dict[K, V]:
        """The values of those `keys` that are present (each now recently used), under one lock."""
        with self._lock:
            table = self._table
            found = {key: table[key] for key in keys if key in table}
            misses = sum(1 for key in keys if key not in found)
            self.hits += len(keys) - misses
            self.misses += misses
        return found

    def put_many(self, items: Iterable[Tuple[K, V]]) -> None:
        """Keep the items (a key already present, put by another thread meanwhile, keeps its value); the
        least recently used entries go first."""
        size_of = self._size_of
        capacity = self.capacity
        fitting = [(key, value) for key, value in items if (1 if size_of is None else size_of(value)) <= capacity]
        with self._lock:
            table = self._table
            for key, value in fitting:
                if key not in table:
                    table[key] = value

    def clear(self) -> None:
        with self._lock:
            self._table.clear()
