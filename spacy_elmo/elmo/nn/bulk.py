"""`BiLM.embed`'s loop: sentences into batches (batch_plan.py, the planner the spaCy component uses),
each batch reduced to what the caller keeps (layer_choice.py), and, when a batch runs out of device
memory, the batch halved and the run gone on. After one out-of-memory a batch larger than the half that
followed it is halved before it is tried, so a long run pays for each failure once, not once per batch.
Stateful batches are never halved: their rows carry states to the same rows of the next batch."""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, List, Optional, Protocol, Sequence

import numpy as np
import torch

from ..errors import InputError
from ..util.validation import short_repr
from .batch_plan import padded_tokens, plan_batches
from .errors import DeviceMemoryError
from .layer_choice import OutputChoice
from .precision import fp32_scope
from .run_options import EXACT, RunOptions

# Where no token budget is given, batches are bounded by their count of sentences alone.
NO_TOKEN_BUDGET = 2**62


class Embedder(Protocol):
    """What the loop needs of a `BiLM` (bilm.py, which imports this module)."""

    @property
    def n_layers(self) -> int: ...

    @property
    def output_dim(self) -> int: ...

    @property
    def device(self) -> torch.device: ...

    def forward_sentences(self, sentences: Sequence[Sequence[str]], stateful: bool, run: RunOptions) -> Any: ...


def _halves(batch: List[int]) -> List[List[int]]:
    half = (len(batch) + 1) // 2
    return [batch[:half], batch[half:]]


def run_halving(
    batches: Sequence[List[int]], lengths: Sequence[int], run_batch: Callable[[List[int]], None], stateful: bool
) -> None:
    """`run_batch` on every batch in order; a batch that raises torch.OutOfMemoryError is split in two
    (longest rows first) and each half run, down to one sentence, then a `DeviceMemoryError`."""
    pending = deque(batches)
    limit: Optional[int] = None
    while pending:
        batch = pending.popleft()
        if limit is not None and len(batch) > 1 and padded_tokens(lengths, batch) > limit:
            pending.extendleft(reversed(_halves(batch)))
            continue
        try:
            run_batch(batch)
            continue
        except torch.OutOfMemoryError:
            pass  # retried outside the handler, so the traceback's tensors are freed first
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        if stateful or len(batch) == 1:
            raise DeviceMemoryError(batch[0], lengths[batch[0]], stateful)
        halves = _halves(batch)
        limit = padded_tokens(lengths, halves[0])
        pending.extendleft(reversed(halves))


def check_token_lists(sentences: Any, caller: str) -> None:
    """`sentences` is a sequence of sequences of token strings, or `caller` refuses it by name: anything
    else fails far inside (or maps numbers to characters). A string is left to the string check, whose
    message says how to split it."""
    if isinstance(sentences, str):
        return
    if not isinstance(sentences, (Sequence, np.ndarray)):
        raise InputError(f"{caller} takes a list of sentences, each a list of tokens, got {short_repr(sentences)}")
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str):
            continue
        if not isinstance(sentence, (Sequence, np.ndarray)) or not all(isinstance(token, str) for token in sentence):
            raise InputError(
                f"{caller} takes sentences as lists of token strings; sentence {i} is {short_repr(sentence)}"
            )


def _check_count(name: str, value: Any, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be an integer of at least 1{' or None' if optional else ''}, got {value!r}")


def embed_sentences(
    bilm: Embedder,
    sentences: Sequence[Sequence[str]],
    stateful: bool,
    batch_size: int,
    run: RunOptions = EXACT,
    output: OutputChoice = OutputChoice(),
    max_batch_tokens: Optional[int] = None,
) -> List[np.ndarray]:
    """What `BiLM.embed` returns (its docstring has the rules)."""
    _check_count("batch_size", batch_size)
    _check_count("max_batch_tokens", max_batch_tokens, optional=True)
    if max_batch_tokens is not None:
        if stateful:
            raise InputError("stateful batches are consecutive groups of batch_size; drop max_batch_tokens")
    lengths = [len(s) for s in sentences]
    weights_array = output.weights(bilm.n_layers)
    weights = None if weights_array is None else torch.from_numpy(weights_array).to(bilm.device)
    empty = np.zeros(output.shape(bilm.n_layers, 0, bilm.output_dim), dtype=np.float32)
    results: List[np.ndarray] = [empty] * len(sentences)

    def run_batch(batch: List[int]) -> None:
        out = bilm.forward_sentences([sentences[i] for i in batch], stateful=stateful, run=run)
        reduced = output.reduce(out.layers, out.mask, weights).cpu().numpy()
        for row, i in enumerate(batch):
            results[i] = output.row(reduced, row, lengths[i])

    budget = NO_TOKEN_BUDGET if max_batch_tokens is None else max_batch_tokens
    rows = batch_size if max_batch_tokens is None else None
    batches = plan_batches(lengths, budget, stateful, batch_size, max_rows=rows)
    with torch.inference_mode(), fp32_scope(run.tf32):
        run_halving(batches, lengths, run_batch, stateful)
    return results
