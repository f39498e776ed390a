"""The errors of the torch biLM: fast modes and CPU kernels."""

from __future__ import annotations

from ..errors import InputError


class FastModeError(InputError):
    """A fast mode asked for something only the exact model does (training, stateful, unknown mode)."""


class FastModeUnavailable(FastModeError):
    """The mode cannot run fast on the biLM's device (int8 off the CPU); the exact model is the faster
    one there. A pipeline falls back to it (pipeline/bilm_layer/process_state.py)."""


class KernelChoiceError(InputError):
    """`SPACY_ELMO_CPU_KERNEL` names no kernel."""


class TimeLoopError(InputError):
    """A call asked for a time loop that does not exist."""
