"""The "auto" fast mode's choice: the mode closest to exact among those that beat the exact biLM on this
machine and this model, found by a short timing, as the exact path picks its CPU kernel per shape
(elmo/nn/kernels.py) rather than from a table.

Why measured: whether a fast mode pays depends on the CPU (bf16 units, VNNI, memory bandwidth) and on
the model's size (at the bundled model's size the step loop's Python and gate arithmetic dominate and
int8 pays nothing), and a table of CPUs would be wrong on the next one. The order of preference is
exactness: bf16 (cosine to exact about 0.99999) before int8 (about 0.998); exact when neither pays.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from ..bilm import BiLM

logger = logging.getLogger(__name__)

# A fast mode is chosen only when it runs every probe in under this fraction of the exact model's time.
MARGIN = 0.9
# The probes: (rows, tokens per row), a latency-bound and a throughput-bound shape.
PROBES = ((1, 16), (16, 8))
ROUNDS = 3


def _probe_seconds(model: BiLM, embedded: torch.Tensor) -> float:
    """One call's wall time; on a GPU until its kernels have finished, not only been launched."""
    lengths = np.full(embedded.shape[0], embedded.shape[1], dtype=np.int64)
    if embedded.is_cuda:
        torch.cuda.synchronize(embedded.device)
    start = time.perf_counter()
    model.forward_embedded(embedded, lengths)
    if embedded.is_cuda:
        torch.cuda.synchronize(embedded.device)
    return time.perf_counter() - start


def speedup(exact: BiLM, fast: BiLM) -> float:
    """The exact model's time over the fast one's on the slower-gaining probe: best of alternating
    rounds after a warm-up call each (which also packs the fast copy's weights)."""
    generator = torch.Generator().manual_seed(0)
    ratios = []
    with torch.inference_mode():
        for rows, tokens in PROBES:
            embedded = torch.randn(rows, tokens + 2, exact.options.lstm.projection_dim, generator=generator)
            embedded = embedded.to(exact.device)
            best = {id(exact): float("inf"), id(fast): float("inf")}
            for model in (exact, fast):
                _probe_seconds(model, embedded)
            for _ in range(ROUNDS):
                for model in (exact, fast):
                    best[id(model)] = min(best[id(model)], _probe_seconds(model, embedded))
            ratios.append(best[id(exact)] / best[id(fast)])
    return min(ratios)


def choose_mode(exact: BiLM, candidates: Sequence[str], make: Callable[[BiLM, str], BiLM]) -> Optional[str]:
    """The first of `candidates` (in order of preference) whose copy, `make(exact, mode)`, beats `exact`
    by `MARGIN` on every probe, or None (exact); the choice and its figures go to the log."""
    for mode in candidates:
        gain = speedup(exact, make(exact, mode))
        if gain > 1.0 / MARGIN:
            logger.info("fast_mode 'auto' chose %r: %.2fx the exact biLM on a short timing", mode, gain)
            return mode
        logger.info("fast_mode 'auto': %r ran %.2fx the exact biLM, not enough to choose it", mode, gain)
    logger.info("fast_mode 'auto' chose the exact biLM: no fast mode beat it here (tried %s)", ", ".join(candidates))
    return None
