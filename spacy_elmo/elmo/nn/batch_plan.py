"""How sentences are grouped into the biLM's batches: the one planner, shared by the spaCy component
(pipeline/bilm_layer/thinc_bilm.py) and `BiLM.embed` (so `dump`), pure Python so that neither side
imports the other. A batch's cost is its padded size, rows x longest row (tokens, boundaries not
counted): what the LSTM computes whatever the shorter rows hold."""

from __future__ import annotations

from typing import List, Optional, Sequence


def padded_tokens(lengths: Sequence[int], batch: Sequence[int]) -> int:
    """The padded size of `batch` (indices into `lengths`)."""
    return len(batch) * max((lengths[i] for i in batch), default=0)


def plan_batches(
    lengths: Sequence[int],
    max_batch_tokens: int,
    stateful: bool,
    batch_size: int = 64,
    max_rows: Optional[int] = None,
) -> List[List[int]]:
    """Indices per batch. Stateless: longest first, each batch's padded size within the budget (a row
    longer than the budget alone) and at most `max_rows` rows; empty rows skip the biLM. Stateful:
    consecutive groups of `batch_size`, empty rows included, so row i carries its state to row i."""
    order = list(range(len(lengths)))
    if stateful:
        return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    order.sort(key=lambda i: lengths[i], reverse=True)
    batches: List[List[int]] = []
    for i in order:
        if lengths[i] == 0:
            continue
        last = batches[-1] if batches else None
        if (
            last is not None
            and lengths[last[0]] * (len(last) + 1) <= max_batch_tokens
            and (max_rows is None or len(last) < max_rows)
        ):
            last.append(i)
        else:
            batches.append([i])
    return batches
