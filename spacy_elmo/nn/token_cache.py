"""A bounded cache of context-independent token embeddings, keyed by the token string.

The char-CNN and highway layers cost about a fifth of a full-size ELMo's time per token, and running
text repeats its tokens (a few thousand word types cover most tokens), so at inference each type is
encoded once and reused. Least recently used types are dropped beyond `capacity`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Sequence

import torch

from ..errors import ElmoError


class TokenEmbeddingCache:
    """Thread-safe: threads sharing a pipeline share its biLM. The lock guards only the table (never the
    encoding, which runs outside it, in parallel), and each lookup answers from the rows it collected,
    so another thread's eviction cannot take a row from under it."""

    def __init__(self, capacity: int = 20_000) -> None:
        if capacity < 0:
            raise ElmoError(f"token cache capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self._rows: "OrderedDict[str, torch.Tensor]" = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def __getstate__(self) -> Dict[str, Any]:
        """Copies and pickles (`copy.deepcopy` of a biLM or pipe) get a lock of their own."""
        return {key: value for key, value in self.__dict__.items() if key != "_lock"}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()

    def lookup(self, tokens: Sequence[str], encode: Callable[[List[str]], torch.Tensor]) -> torch.Tensor:
        """Embeddings `[len(tokens), dim]` of distinct `tokens`; `encode` computes the missing ones."""
        if self.capacity == 0:
            return encode(list(tokens))
        with self._lock:
            found = {token: self._rows[token] for token in tokens if token in self._rows}
        missing = [token for token in tokens if token not in found]
        if missing:
            # Copies, so that a kept row does not keep its whole batch alive.
            found.update((token, row.clone()) for token, row in zip(missing, encode(missing)))
        result = torch.stack([found[token] for token in tokens])
        with self._lock:
            rows = self._rows
            for token in tokens:
                if token in rows:
                    rows.move_to_end(token)
                else:
                    rows[token] = found[token]
            while len(rows) > self.capacity:
                rows.popitem(last=False)
        return result
