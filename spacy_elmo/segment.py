"""Where to cut a long document before the biLM sees it, and which rows of each piece to keep.

ELMo has no length limit, but its cost and memory grow with the longest sequence of a batch, and it was
trained on sentences. So a document is embedded sentence by sentence when it has sentence boundaries;
a sentence (or a document without boundaries) longer than `max_length` is cut into overlapping windows,
and each token keeps the vectors of the window where it sits furthest from an edge: every kept token sees
at least `overlap` tokens of context on each side (less only at the document's own edges).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

from .errors import ElmoError


@dataclass(frozen=True)
class Segment:
    """Embed tokens `[start, end)`; keep the rows of tokens `[keep_start, keep_end)`."""

    start: int
    end: int
    keep_start: int
    keep_end: int


def check_window_settings(max_length: int, overlap: int) -> None:
    if max_length < 1:
        raise ElmoError(f"max_length must be at least 1, got {max_length}")
    if not 0 <= 2 * overlap < max_length:
        raise ElmoError(f"overlap must be >= 0 and less than half of max_length ({max_length}), got {overlap}")


def windows(start: int, end: int, max_length: int, overlap: int) -> List[Segment]:
    """Cover tokens `[start, end)` with windows of at most `max_length` tokens."""
    check_window_settings(max_length, overlap)
    if end - start <= max_length:
        return [Segment(start, end, start, end)]
    core = max_length - 2 * overlap
    segments = []
    keep = start
    while keep < end:
        keep_end = min(keep + core, end)
        # Shift the window inwards at the edges, so that it is always full and context is not wasted.
        window_start = max(start, min(keep - overlap, end - max_length))
        window_end = min(end, window_start + max_length)
        segments.append(Segment(window_start, window_end, keep, keep_end))
        keep = keep_end
    return segments


def segment(n_tokens: int, sentence_starts: Optional[Sequence[int]], max_length: int, overlap: int) -> List[Segment]:
    """Segments covering tokens `[0, n_tokens)` once each: per sentence when `sentence_starts` (the
    first token index of each sentence, starting with 0) is given, windows otherwise."""
    if n_tokens == 0:
        return []
    bounds = list(sentence_starts) if sentence_starts else [0]
    if bounds[0] != 0 or any(b <= a for a, b in zip(bounds, bounds[1:])) or bounds[-1] >= n_tokens:
        raise ElmoError(f"sentence starts must rise from 0 and stay below {n_tokens}, got {bounds[:10]}")
    ends = bounds[1:] + [n_tokens]
    out: List[Segment] = []
    for start, end in zip(bounds, ends):
        out.extend(windows(start, end, max_length, overlap))
    return out
