"""Opt-in inference modes that trade ELMo's exactness for speed. The exact `BiLM` stays the default.

    fast = make_fast(bilm, "int8")   # a frozen, stateless copy with the same embed / forward API

"int8" (CPUs): every LSTM product an int8 product (int8.py). "bf16" (for GPUs): every LSTM product bf16
into fp32 (bf16.py). Both keep the exact model's step loop, gate arithmetic and clipping (fast_layer.py).

Measured speed and deviation: benchmarks/bench_fast.py, docs/fast_modes.md (which also says why a
`torch.nn.LSTM`-based mode is not offered: it measured slower than the exact path).

The char-CNN is the exact one (its output is cached per token type at inference anyway). A fast model
is a snapshot: it copies the weights, so training the exact model later does not change it. It cannot
train (its products have no gradients) and cannot run stateful (it carries no states between batches).
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np
import torch
from torch import nn

from ..bilm import BiLM
from ..errors import FastModeError, FastModeUnavailable
from ..lstm import BiLSTMStack
from ..run_options import EXACT, RunOptions
from .bf16 import Bf16BiLSTMLayer
from .int8 import Int8BiLSTMLayer

__all__ = ["FAST_MODES", "FastBiLM", "FastModeError", "FastModeUnavailable", "make_fast", "unavailable_reason"]

FAST_MODES = ("int8", "bf16")


def unavailable_reason(mode: str, device: torch.device) -> Optional[str]:
    """Why `mode` cannot run on `device`, or None when it can."""
    if mode == "int8" and device.type != "cpu":
        return (
            f"the 'int8' fast mode runs on the CPU only (fbgemm's int8 products), but the biLM is on "
            f"{device}; use the exact BiLM (fast_mode = null) there"
        )
    return None


def make_fast(bilm: BiLM, mode: str) -> "FastBiLM":
    """A frozen, stateless copy of `bilm` whose LSTM runs in `mode` (see the module docstring for what
    each mode gives up). The exact `bilm` is left untouched."""
    if mode not in FAST_MODES:
        raise FastModeError(
            f"unknown fast mode {mode!r}; choose one of {', '.join(FAST_MODES)}, "
            "or use the BiLM itself for exact outputs"
        )
    reason = unavailable_reason(mode, bilm.device)
    if reason is not None:
        raise FastModeUnavailable(reason)
    fast_layer = Int8BiLSTMLayer if mode == "int8" else Bf16BiLSTMLayer
    layers = [fast_layer(layer) for layer in bilm.lstm.layers]
    return FastBiLM(bilm, BiLSTMStack.of_layers(layers, bilm.lstm.use_skip_connections), mode)


class FastBiLM(BiLM):
    """A BiLM whose LSTM stack is a fast one: same `forward`, `forward_sentences`, `embed`,
    `embed_tokens`; stateless and inference only."""

    def __init__(self, exact: BiLM, stack: nn.Module, mode: str) -> None:
        # Built as a BiLM (on the host: a few MB, where the meta device's random init would import torch's
        # compiler stack, which takes longer than the build), then given copies of the exact model's
        # tensors: every attribute a BiLM has, the fast one has too, as a snapshot on the exact model's device.
        super().__init__(exact.options)
        self.mode = mode
        self.lstm = stack
        state = {k: v.detach().clone() for k, v in exact.state_dict().items() if not k.startswith("lstm.")}
        self.load_state_dict(state, assign=True)
        # Every tensor outside the fast stack (which made its own) must now be one of those copies; one
        # that is not still holds the random init.
        copied = {t.data_ptr() for t in state.values()}
        outside_lstm = [
            t for name, t in (*self.named_parameters(), *self.named_buffers()) if not name.startswith("lstm.")
        ]
        if any(t.data_ptr() not in copied for t in outside_lstm):
            raise FastModeError(
                "a BiLM tensor outside its state_dict was not copied to the fast model; make_fast needs updating for it"
            )
        self.requires_grad_(False)
        nn.Module.train(self, False)

    def train(self, mode: bool = True) -> "FastBiLM":
        if mode:
            raise FastModeError(
                f"a {self.mode!r} fast model cannot train; train the exact BiLM and "
                "call make_fast on it again afterwards"
            )
        super().train(False)
        return self

    def _run_directions(
        self, embedded: torch.Tensor, lengths: np.ndarray, stateful: bool, run: RunOptions = EXACT
    ) -> List[torch.Tensor]:
        if stateful:
            raise FastModeError(f"a {self.mode!r} fast model is stateless only; use the exact BiLM for stateful=True")
        if torch.is_grad_enabled() and embedded.requires_grad:
            raise FastModeError(
                f"a {self.mode!r} fast model gives no gradients; run it under "
                "torch.inference_mode() or use the exact BiLM"
            )
        return super()._run_directions(embedded, lengths, stateful, run)

    def set_warm_start(self, sentences: Optional[Sequence[Sequence[str]]] = None, run: RunOptions = EXACT) -> None:
        raise FastModeError(
            "set the warm start on the exact BiLM and call make_fast on it afterwards: "
            "the fast model takes the exact model's initial state with its weights"
        )
