"""Opt-in inference modes that trade ELMo's exactness for speed. The exact `BiLM` stays the default.

    fast = make_fast(bilm, "int8")   # a frozen, stateless copy with the same embed / forward API

"int8" (CPUs): every LSTM product an int8 product (int8.py). "bf16" (GPUs, and CPUs with bf16 units):
every LSTM product bf16 into fp32 (bf16.py). Both keep the exact model's step loop, gate arithmetic and
clipping (fast_layer.py). "auto": bf16 where it beats exact on this machine, else int8 where that does,
else exact, by a short timing (auto.py).

Measured speed and deviation: benchmarks/bench_fast.py, docs/fast_modes.md (which also says why a
`torch.nn.LSTM`-based mode is not offered: it measured slower than the exact path).

In int8 the char-CNN is the exact one (its output is cached per token type at inference); in bf16
its highway and projection products are bf16 too, its convolutions fp32. A fast model
is a snapshot: it copies the weights, so training the exact model later does not change it. It cannot
train (its products have no gradients) and cannot run stateful (it carries no states between batches).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from ..bilm import BiLM
from ..errors import FastModeError, FastModeUnavailable
from ..lstm import BiLSTMStack
from ..run_options import EXACT, RunOptions
from . import auto, bf16
from .int8 import Int8BiLSTMLayer

__all__ = [
    "AUTO",
    "FAST_MODES",
    "FAST_MODE_SETTINGS",
    "FastBiLM",
    "FastModeError",
    "FastModeUnavailable",
    "check_fast_mode",
    "make_fast",
    "resolve_mode",
    "unavailable_reason",
]

FAST_MODES = ("int8", "bf16")
AUTO = "auto"
# What a user may ask for: a mode, or "auto" (the mode that pays here, measured).
FAST_MODE_SETTINGS = (*FAST_MODES, AUTO)


def check_fast_mode(mode: str) -> None:
    """Refuse a fast mode setting that is neither a mode nor "auto"."""
    if mode not in FAST_MODE_SETTINGS:
        raise FastModeError(
            f"unknown fast_mode {mode!r}; choose one of {', '.join(FAST_MODE_SETTINGS)}, "
            "or null (the exact BiLM itself) for exact outputs"
        )


def unavailable_reason(mode: str, device: torch.device) -> Optional[str]:
    """Why `mode` cannot run on `device`, or None when it can."""
    if mode == "int8" and device.type != "cpu":
        return (
            f"the 'int8' fast mode runs on the CPU only (fbgemm's int8 products), but the biLM is on "
            f"{device}; use the exact BiLM (fast_mode = null) there"
        )
    if mode == "bf16" and device.type == "cpu":
        return bf16.missing_bf16_units()
    return None


def resolve_mode(bilm: BiLM, mode: str) -> Optional[str]:
    """The mode `mode` names for `bilm`: itself, or for "auto" the one measured to pay on this machine
    (None: the exact biLM), the choice logged (auto.py)."""
    check_fast_mode(mode)
    if mode != AUTO:
        return mode
    candidates = [m for m in ("bf16", "int8") if unavailable_reason(m, bilm.device) is None]
    return auto.choose_mode(bilm, candidates, _copy)


def make_fast(bilm: BiLM, mode: str) -> "FastBiLM":
    """A frozen, stateless copy of `bilm` whose LSTM runs in `mode` (see the module docstring for what
    each mode gives up; "auto" raises `FastModeUnavailable` where no mode beats exact). The exact
    `bilm` is left untouched."""
    chosen = resolve_mode(bilm, mode)
    if chosen is None:
        raise FastModeUnavailable("no fast mode ran faster than the exact biLM here; use the BiLM itself")
    reason = unavailable_reason(chosen, bilm.device)
    if reason is not None:
        raise FastModeUnavailable(reason)
    return _copy(bilm, chosen)


def _copy(bilm: BiLM, mode: str) -> "FastBiLM":
    fast_layer = Int8BiLSTMLayer if mode == "int8" else bf16.Bf16BiLSTMLayer
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
        if mode == "bf16":
            bf16.with_bf16_products(self.char_encoder)
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
        self,
        embedded: torch.Tensor,
        lengths: np.ndarray,
        device_lengths: torch.Tensor,
        stateful: bool,
        run: RunOptions = EXACT,
    ) -> List[Tuple[torch.Tensor, torch.Tensor]]:
        if stateful:
            raise FastModeError(f"a {self.mode!r} fast model is stateless only; use the exact BiLM for stateful=True")
        if torch.is_grad_enabled() and embedded.requires_grad:
            raise FastModeError(
                f"a {self.mode!r} fast model gives no gradients; run it under "
                "torch.inference_mode() or use the exact BiLM"
            )
        return super()._run_directions(embedded, lengths, device_lengths, stateful, run)

    def set_warm_start(self, sentences: Optional[Sequence[Sequence[str]]] = None, run: RunOptions = EXACT) -> None:
        raise FastModeError(
            "set the warm start on the exact BiLM and call make_fast on it afterwards: "
            "the fast model takes the exact model's initial state with its weights"
        )
