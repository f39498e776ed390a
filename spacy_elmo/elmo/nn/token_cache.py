"""A bounded cache of context-independent token embeddings, keyed by the token string.

The char-CNN and highway layers cost about a fifth of a full-size ELMo's time per token, and running
text repeats its tokens (a few thousand word types cover most tokens), so at inference each type is
encoded once and reused. Least recently used types are dropped beyond `capacity`.
"""

from __future__ import annotations

from typing import Callable, List, Sequence

import torch

from .chars import CACHED_TYPES
from .lru import LRU


class TokenEmbeddingCache(LRU[str, torch.Tensor]):
    """Thread-safe: threads sharing a pipeline share its biLM. The lock guards only the table (elmo/nn/lru.py),
    so encoding runs outside it, in parallel."""

    def __init__(self, capacity: int = CACHED_TYPES) -> None:
        super().__init__(capacity, what="token cache capacity")

    def lookup(self, tokens: Sequence[str], encode: Callable[[List[str]], torch.Tensor]) -> torch.Tensor:
        """Embeddings `[len(tokens), dim]` of distinct `tokens`; `encode` computes the missing ones."""
        if self.capacity == 0:
            return encode(list(tokens))
        found = self.get_many(tokens)
        missing = [token for token in tokens if token not in found]
        if missing:
            # Copies, so that a kept row does not keep its whole batch alive.
            new = {token: row.clone() for token, row in zip(missing, encode(missing))}
            self.put_many(new.items())
            found.update(new)
        return torch.stack([found[token] for token in tokens])
