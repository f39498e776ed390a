"""The torch side of the biLM layer: the module thinc's PyTorchWrapper holds (a slot for the BiLM, so
the model's structure is fixed before any weights are loaded), how it is saved and restored (options,
parameters and what else its format needs, formats.describe, in the shim's bytes; parameters as
safetensors, which holds tensors and nothing else, so loading a pipeline runs no code), and the
conversions between thinc's arrays and torch's tensors.

Saved tensors are checked against the biLM their options build before any is loaded: torch would copy
an int32 tensor into a float parameter, value by value, giving vectors of another scale without a word.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import safetensors.torch
import srsly
import torch
from safetensors import SafetensorError
from thinc.api import ArgsKwargs, Model, torch2xp, xp2torch
from torch import nn

from ...elmo.errors import ElmoError
from ...elmo.formats import describe, rebuild
from ...elmo.nn.bilm import BiLM
from ...elmo.nn.options import ElmoOptions
from ...elmo.nn.run_options import RunOptions
from ..errors import SavedWeightsError

# What a damaged or foreign message makes msgpack, thinc and torch raise while it is decoded and read
# (cut short, extra data, a key missing, a value of another type).
DECODE_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError, OverflowError)
SAVED_FIX = "save the pipeline again, or copy the saved pipeline whole"


class BiLMHolder(nn.Module):
    """A slot for the BiLM, so the thinc model's structure is fixed before any weights are loaded."""

    def __init__(self) -> None:
        super().__init__()
        self.bilm: Optional[BiLM] = None

    def forward(self, sentences: List[List[str]], stateful: bool, run: RunOptions) -> torch.Tensor:
        """Token strings -> layers `[L+1, batch, n, 2P]` (boundaries added and removed inside)."""
        assert self.bilm is not None
        return self.bilm.forward_sentences(sentences, stateful=stateful, run=run).layers


def serialize_holder(holder: BiLMHolder) -> bytes:
    options = holder.bilm.options.to_dict() if holder.bilm is not None else None
    # A format's own parts (ELMoForManyLangs' vocabularies) travel beside the options (formats.describe).
    extra = describe(holder.bilm) if holder.bilm is not None else {}
    state = {name: tensor.detach().cpu().contiguous() for name, tensor in holder.state_dict().items()}
    return srsly.msgpack_dumps({"options": options, "safetensors": safetensors.torch.save(state), **extra})


def decoded(data: Any, what: str) -> Dict[str, Any]:
    """The msgpack map `data` holds; `what` names it in the error if it holds none."""
    try:
        msg = srsly.msgpack_loads(data)
    except DECODE_ERRORS as err:
        raise SavedWeightsError(f"{what} does not decode ({first_line(err)}): {SAVED_FIX}") from None
    if not isinstance(msg, dict):
        raise SavedWeightsError(f"{what} holds a {type(msg).__name__}, not a saved model: {SAVED_FIX}")
    return msg


def first_line(err: BaseException) -> str:
    """The error's type and first line, for a message about the file it was raised on."""
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}" if text else type(err).__name__


def _rebuilt(msg: Dict[str, Any]) -> BiLM:
    """The untrained biLM the saved options and format parts describe (options out of bounds: their own
    OptionsError, naming the key)."""
    try:
        return rebuild(ElmoOptions.from_dict(msg["options"]), msg)
    except ElmoError:
        raise
    except DECODE_ERRORS as err:
        raise SavedWeightsError(
            f"the saved elmo biLM's options and format parts do not describe a model ({first_line(err)}): {SAVED_FIX}"
        ) from None


def _load_safetensors(data: Any, expected: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """The saved tensors, each of the name, dtype and shape of the `expected` one."""
    try:
        state = safetensors.torch.load(data)
    except (SafetensorError, *DECODE_ERRORS) as err:
        raise SavedWeightsError(f"the saved elmo biLM's weights are damaged ({err}); {SAVED_FIX}") from None
    missing, unexpected = sorted(expected.keys() - state.keys()), sorted(state.keys() - expected.keys())
    if missing or unexpected:
        which = f"lack {missing[0]!r}, a tensor" if missing else f"hold {unexpected[0]!r}, no tensor"
        raise SavedWeightsError(f"the saved elmo biLM's weights {which} of the biLM its options build: {SAVED_FIX}")
    for name, tensor in state.items():
        want = expected[name]
        if tensor.dtype != want.dtype or tensor.shape != want.shape:
            raise SavedWeightsError(
                f"the saved elmo biLM's tensor {name!r} is {tensor.dtype} of shape {list(tensor.shape)}, but its "
                f"options build {want.dtype} of shape {list(want.shape)}: {SAVED_FIX}"
            )
    return state


def deserialize_holder(_: BiLMHolder, data: bytes, device: torch.device, warm_start: bool = False) -> BiLMHolder:
    """A new holder from `data` (thinc passes the current one, which is replaced whole), started warm or
    cold as the config it is loaded with says (`warm_start`): the saved warm state is kept where the
    config wants one, a cold biLM made warm from its own weights, a warm one made cold."""
    msg = decoded(data, "the saved elmo biLM")
    if "options" not in msg:  # None where no biLM was loaded; absent, the layer would load its config's
        raise SavedWeightsError(f"the saved elmo biLM holds no options: {SAVED_FIX}")
    holder = BiLMHolder()
    if msg["options"] is not None:
        holder.bilm = _rebuilt(msg)
        if "safetensors" not in msg:
            raise SavedWeightsError(
                "the saved elmo biLM holds no safetensors weights, so it was not saved by this spacy-elmo; "
                "build the pipeline again from its config and weights"
            )
        state = _load_safetensors(msg["safetensors"], holder.state_dict())
        holder.load_state_dict({name: tensor.to(device) for name, tensor in state.items()})
        holder.bilm.eval()
        if warm_start and not holder.bilm.warm_start:
            holder.bilm.set_warm_start()
        elif holder.bilm.warm_start and not warm_start:
            holder.bilm.clear_warm_start()
    return holder.to(device)


def convert_inputs(
    model: Model, X: Tuple[List[List[str]], bool, RunOptions], is_train: bool
) -> Tuple[ArgsKwargs, Callable]:
    sentences, stateful, run = X
    return ArgsKwargs(args=(sentences,), kwargs={"stateful": stateful, "run": run}), lambda d: None


def convert_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> Tuple[Any, Callable]:
    """Torch -> the ops' arrays without a host round trip: a CUDA tensor becomes a CuPy array (dlpack)."""
    _, layers = inputs_outputs

    def backprop(d_layers: Any) -> ArgsKwargs:
        return ArgsKwargs(args=(layers,), kwargs={"grad_tensors": xp2torch(d_layers, device=layers.device)})

    return torch2xp(layers, ops=model.ops), backprop
