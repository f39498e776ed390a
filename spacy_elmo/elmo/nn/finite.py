"""The check that keeps a NaN or infinite activation from reaching a caller as a vector.

Every weight a reader accepts is finite, yet weights far outside a trained model's scale (a damaged or
rescaled file, a fine-tuned biLM whose training diverged) overflow float32 inside the char-CNN or the
LSTM, and the clipping that follows keeps the NaN. So each batch's output is checked once, and the
error names the weight to blame. The check is the sum's finiteness, one pass with no mask tensor (a
twentieth of `isfinite(...).all()`'s time): a NaN or an infinity makes the sum so, and so do finite
values large enough to overflow it, which no model in scale gives."""

from __future__ import annotations

from typing import List

import torch
from torch import nn

from ..errors import InputFileError


def check_finite(values: torch.Tensor, model: nn.Module, what: str) -> None:
    """Raise `InputFileError` if `values` (the `what` of `model`) hold a NaN or an infinity. A model on
    torch's `meta` device (shapes without values, as tests/device runs one) has nothing to check."""
    if values.is_meta or bool(torch.isfinite(values.sum())):
        return
    raise InputFileError(f"the biLM's {what} are not finite (NaN or infinity): {_blame(model)}")


def non_finite_parameters(model: nn.Module) -> List[str]:
    """The names of `model`'s parameters that hold a NaN or an infinity, in the model's order."""
    return [name for name, parameter in model.named_parameters() if not bool(torch.isfinite(parameter).all())]


def _blame(model: nn.Module) -> str:
    bad = non_finite_parameters(model)
    if bad:
        return (
            f"its weight '{bad[0]}' holds NaN or infinite values; if training changed the biLM "
            "(frozen = false), train again with a lower learning rate, else load the model's files again"
        )
    largest_name, largest = "", 0.0
    for name, parameter in model.named_parameters():
        peak = float(parameter.detach().abs().max()) if parameter.numel() else 0.0
        if peak > largest:
            largest_name, largest = name, peak
    where = f" (the largest, {largest:.3g}, in '{largest_name}')" if largest_name else ""
    return (
        f"its weights{where} overflow float32 on this input, far beyond a trained model's scale; the "
        "weights file is damaged or was written in another scale: load the model's original weights"
    )
