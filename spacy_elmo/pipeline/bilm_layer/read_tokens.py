"""What the biLM reads of a batch of docs: which tokens (all but whitespace, the one rule for it), and the
pieces the segmenter cuts them into; how pieces are batched: elmo/nn/batch_plan.py, shared with `embed`.
Whitespace tokens (`token.is_space`) did not occur in the biLM's training text, so they never reach it
and their rows are zeros; the hooks leave them out of span and doc means by the same rule."""

from __future__ import annotations

from typing import List

import numpy as np
from spacy.tokens import Doc, Token

from .segment import Segment, Segmenter, check_segments


def read_by_bilm(token: Token) -> bool:
    """Whether the biLM reads `token` (whitespace tokens it does not)."""
    return not token.is_space


def read_mask(doc: Doc) -> np.ndarray:
    """Per token of `doc`, whether the biLM reads it."""
    return np.array([read_by_bilm(token) for token in doc], dtype=bool)


def kept_tokens(doc: Doc) -> np.ndarray:
    """Indices of the tokens of `doc` the biLM reads."""
    return np.flatnonzero(read_mask(doc)).astype(np.int64, copy=False)


def doc_segments(segmenter: Segmenter, doc: Doc, keep: np.ndarray) -> List[Segment]:
    """The pieces the biLM sees of `doc`, in the index space of its kept (non-space) tokens."""
    segments = segmenter(doc, keep) if len(keep) else []
    check_segments(segments, len(keep), segmenter)
    return segments
