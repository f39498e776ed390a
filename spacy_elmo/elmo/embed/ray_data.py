"""ELMo in a Ray Data pipeline: a callable class for `Dataset.map_batches`, the biLM loaded once per actor.

    ds = ray.data.from_items([{"tokens": ["The", "bank", "."]}, ...])
    ds = ds.map_batches(ElmoBatchMapper, fn_constructor_kwargs={"model": "gutenberg-web-2x512"},
                        concurrency=4, num_gpus=1, batch_size=256)

Each row gains `output`: its sentence's layers `[L+1, n_tokens, 2P]` float32, or with `pooling` one
vector per token `[n_tokens, 2P]` (the `elmo` component's pooling: "mean", "top" or one weight per
layer). Ray is not imported here: the class takes and returns plain column dicts (Ray Data's "numpy"
batch format).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from ..nn.device import default_device
from ..nn.pooling_weights import PoolingWeights, check_pooling, pooling_weights
from ..sources import DEFAULT_MODEL, reference_to, resolve


class ElmoBatchMapper:
    """`batch -> batch` with the ELMo layers of `batch[column]` (lists of tokens) in `batch[output]`.

    `model`: a model directory or archive, a bundled name or a downloaded published model's name.
    `device`: where the biLM runs; default a GPU when the actor has one (`num_gpus`), else the CPU.
    `batch_size`: sentences per forward pass inside a Ray batch. Rows do not depend on their batch.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        column: str = "tokens",
        output: str = "elmo",
        pooling: Optional[PoolingWeights] = None,
        device: Optional[str] = None,
        batch_size: int = 64,
    ) -> None:
        if pooling is not None:
            check_pooling(pooling)
        self.bilm = resolve(reference_to(model)).load()
        self.bilm.to(device or default_device())
        n_layers = self.bilm.options.n_output_layers
        self.weights = None if pooling is None else pooling_weights(pooling, n_layers)
        self.column, self.output, self.batch_size = column, output, batch_size

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        sentences = [[str(token) for token in row] for row in batch[self.column]]
        layers = self.bilm.embed(sentences, batch_size=self.batch_size)
        if self.weights is not None:
            layers = [np.tensordot(self.weights, x, axes=1).astype(np.float32) for x in layers]
        return {**batch, self.output: layers}
