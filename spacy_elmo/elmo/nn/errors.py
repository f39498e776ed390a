"""The errors of the torch biLM: fast modes, CPU kernels, device memory in `embed`."""

from __future__ import annotations

from ..errors import ElmoError, InputError


class FastModeError(InputError):
    """A fast mode asked for something only the exact model does (training, stateful, unknown mode)."""


class FastModeUnavailable(FastModeError):
    """The mode cannot run fast on the biLM's device (int8 off the CPU); the exact model is the faster
    one there. A pipeline falls back to it (pipeline/bilm_layer/process_state.py)."""


class DeviceMemoryError(ElmoError, RuntimeError):
    """`embed` ran out of device memory where halving the batch cannot help: one sentence alone, or a
    stateful batch (halving it would change which states carry over). `sentence`: the index, in the
    call's input, of the (first) sentence named; `dump` names its line instead (`renamed`). A
    RuntimeError, as torch.OutOfMemoryError is."""

    def __init__(self, sentence: int, tokens: int, stateful: bool, name: str = "") -> None:
        self.sentence, self.tokens, self.stateful = sentence, tokens, stateful
        where = name or f"sentence {sentence}"
        if stateful:
            message = (
                f"out of GPU memory on the stateful batch starting at {where}; halving it would change which "
                "states carry over: give a smaller batch size (dump: --batch-size), or run on the CPU"
            )
        else:
            message = (
                f"{where} ({tokens} tokens) does not fit in GPU memory even alone: split it into shorter "
                "lines, or run on the CPU (dump: --gpu-id -1)"
            )
        super().__init__(message)

    def renamed(self, name: str) -> "DeviceMemoryError":
        """The same error naming the sentence as the caller knows it (a file's line)."""
        return DeviceMemoryError(self.sentence, self.tokens, self.stateful, name)
