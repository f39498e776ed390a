"""A bounded cache of context-independent token embeddings, keyed by the token string.

The char-CNN and highway layers cost about a fifth of a full-size ELMo's time per token, and running
text repeats its tokens (a few thousand word types cover most tokens), so at inference each type is
encoded once and reused. Least recently used types are dropped beyond `capacity`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, List, Sequence

import torch

from ..errors import ElmoError


class TokenEmbeddingCache:
    def __init__(self, capacity: int = 20_000) -> None:
        if capacity < 0:
            raise ElmoError(f"token cache capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self._rows: "OrderedDict[str, torch.Tensor]" = OrderedDict()

    def __len__(self) -> int:
        return len(self._rows)

    def clear(self) -> None:
        self._rows.clear()

    def lookup(self, tokens: Sequence[str], encode: Callable[[List[str]], torch.Tensor]) -> torch.Tensor:
        """Embeddings `[len(tokens), dim]` of distinct `tokens`; `encode` computes the missing ones."""
        if self.capacity == 0:
            return encode(list(tokens))
        rows = self._rows
        missing = [t for t in tokens if t not in rows]
        if missing:
            encoded = encode(missing)
            for token, row in zip(missing, encoded):
                # A copy, so that a kept row does not keep its whole batch alive.
                rows[token] = row.clone()
        out = []
        for token in tokens:
            rows.move_to_end(token)
            out.append(rows[token])
        result = torch.stack(out)
        while len(rows) > self.capacity:
            rows.popitem(last=False)
        return result
