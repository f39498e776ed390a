"""The errors of embedding a corpus beyond `dump`'s own (those are ElmoErrors naming the file)."""

from __future__ import annotations

from ..errors import ElmoError


class RayMissingError(ElmoError):
    """`--engine ray` without Ray installed."""
