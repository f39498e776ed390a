"""What `embed` (and so `dump`) returns of each sentence: all L+1 layers, or one mix of them (`top`,
`average` or one weight per layer, by the pooling-weights rule of pooling_weights.py), per token or
pooled to one sentence vector (`mean` over its tokens). Mixing and pooling run on the biLM's device, so
only what is kept crosses to the host: a sentence vector is a small copy of a whole sentence's layers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

import numpy as np
import torch

from ..errors import InputError
from .pooling_weights import check_pooling, pooling_weights

LayerChoice = Union[str, Sequence[float]]
LAYER_SHORTHANDS = ("all", "top", "average")
POOLS = ("mean",)


def layers_from_text(text: str) -> LayerChoice:
    """A command line's `--layers`: a shorthand, or weights separated by commas (`0.2,0.3,0.5`)."""
    if text in LAYER_SHORTHANDS:
        return text
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise InputError(
            f"--layers {text!r} is not one of {', '.join(LAYER_SHORTHANDS)} or one weight per layer, "
            "separated by commas (e.g. 0.2,0.3,0.5)"
        ) from None


@dataclass(frozen=True)
class OutputChoice:
    """`layers`: "all" (`[L+1, n, 2P]`, the default), "top" (the last LSTM layer), "average" (the mean of
    all L+1) or L+1 weights, token layer first (each `[n, 2P]`); `pool`: None (per token) or "mean" (the
    sentence's vector: `[L+1, 2P]` for "all", else `[2P]`)."""

    layers: LayerChoice = "all"
    pool: Optional[str] = None

    def __post_init__(self) -> None:
        if isinstance(self.layers, str):
            if self.layers not in LAYER_SHORTHANDS:
                raise InputError(
                    f"layers {self.layers!r} is not one of {', '.join(LAYER_SHORTHANDS)} or a list of layer weights"
                )
        else:
            check_pooling(self.layers)
            object.__setattr__(self, "layers", tuple(float(w) for w in self.layers))
        if self.pool is not None and self.pool not in POOLS:
            raise InputError(f"pool {self.pool!r} is not one of {', '.join(POOLS)} (or none, per token)")

    def weights(self, n_layers: int) -> Optional[np.ndarray]:
        """The mix's weights `[L+1]`, or None for every layer; a wrong count of weights is named."""
        if self.layers == "all":
            return None
        shorthand = {"top": "top", "average": "mean"}
        return pooling_weights(shorthand[self.layers] if isinstance(self.layers, str) else self.layers, n_layers)

    def shape(self, n_layers: int, n_tokens: int, dim: int) -> Tuple[int, ...]:
        """The shape of one sentence's array."""
        per_token = (n_tokens, dim) if self.pool is None else (dim,)
        return per_token if self.layers != "all" else (n_layers, *per_token)

    def reduce(self, layers: torch.Tensor, mask: torch.Tensor, weights: Optional[torch.Tensor]) -> torch.Tensor:
        """A batch's `layers` `[L+1, batch, n, 2P]` (padding zero), `mask` `[batch, n]` -> rows first,
        `[batch, ...]`: a row's array is its row, cut to its length where tokens are kept."""
        rows = layers.transpose(0, 1)  # [batch, L+1, n, 2P]
        if weights is not None:
            rows = torch.einsum("l,blnd->bnd", weights.to(rows.dtype), rows)
        if self.pool is None:
            return rows
        counts = mask.sum(dim=1).clamp(min=1).to(rows.dtype)  # an empty row's vector stays zero
        summed = rows.sum(dim=-2)
        return summed / counts.view(-1, *([1] * (summed.dim() - 1)))

    def row(self, reduced: np.ndarray, row: int, n_tokens: int) -> np.ndarray:
        """One sentence's array of a reduced batch on the host."""
        value = reduced[row]
        if self.pool is None:
            value = value[..., :n_tokens, :]
        return np.ascontiguousarray(value, dtype=np.float32)
