"""Every private torch API the package calls, in one place: names with a leading underscore, which torch
may rename or drop in any release (`recompile_limit` was `cache_size_limit` before torch 2.6). They are
checked against the torch version CI installs (setup.cfg's floor); a torch that changes one breaks here,
and only here.

- oneDNN's packed linear product (elmo/nn/kernels.py): torch's compiler emits it for CPU linear layers, and no
  public call reaches it;
- the multi-tensor `_foreach` ops and dynamo's settings (elmo/pretrain/step_modes.py): the arithmetic of
  torch's own Adagrad and SGD, one launch per op for all parameters;
- oneDNN's int8 product and its weight packing (elmo/nn/fast/int8.py), as torch's x86 quantizer emits them;
- torch's CPU feature checks for bf16 units (elmo/nn/fast/bf16.py) and int8 units (elmo/nn/fast/int8.py);
- a tensor's version counter, which every in-place change bumps (elmo/nn/kernels.py's packed copies);
- inductor's option names in `THREADS_AT_CALL` (elmo/nn/time_loops/wave_cell.py, elmo/pretrain/step_modes.py).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Type, Union

import torch

Tensors = List[torch.Tensor]


def onednn_linear_available() -> bool:
    """Whether this torch build has oneDNN and the two ops its packed product needs."""
    ops = torch.ops.mkldnn
    return (
        torch.backends.mkldnn.is_available()
        and hasattr(ops, "_linear_pointwise")
        and hasattr(ops, "_reorder_linear_weight")
    )


def onednn_pack(weight: torch.Tensor) -> torch.Tensor:
    """`weight` (`[out, in]`) packed once for `onednn_linear`."""
    return torch.ops.mkldnn._reorder_linear_weight(weight, None)


def onednn_linear(x: torch.Tensor, packed: torch.Tensor, bias: Optional[torch.Tensor]) -> torch.Tensor:
    """x . packed weight (+ bias)."""
    return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")


def onednn_linear_add(x: torch.Tensor, add: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
    """x . packed weight + `add`, the sum fused as the product's post-op."""
    return torch.ops.mkldnn._linear_pointwise.binary(x, add, packed, None, "add")


def onednn_int8_available() -> bool:
    """Whether this torch build has oneDNN's int8 linear product and its weight packing."""
    ops = getattr(torch.ops, "onednn", None)
    return (
        torch.backends.mkldnn.is_available() and hasattr(ops, "qlinear_pointwise") and hasattr(ops, "qlinear_prepack")
    )


def onednn_int8_pack(weight: torch.Tensor) -> torch.Tensor:
    """`weight` (int8, `[out, in]`) packed once for `onednn_int8_linear`."""
    return torch.ops.onednn.qlinear_prepack(weight, None)


def onednn_int8_linear(
    qx: torch.Tensor,
    x_scale: float,
    x_zero_point: int,
    packed: torch.Tensor,
    w_scale: torch.Tensor,
    w_zero_point: torch.Tensor,
    bias: Optional[torch.Tensor],
) -> torch.Tensor:
    """uint8 activations (`qx`, one scale and zero point) . packed int8 weight (per output channel) +
    bias, the result float32."""
    return torch.ops.onednn.qlinear_pointwise(
        qx, x_scale, x_zero_point, packed, w_scale, w_zero_point, bias, 1.0, 0, torch.float32, "none", [], ""
    )


def cpu_int8_units() -> Optional[bool]:
    """Whether torch's own CPU feature check finds int8 dot-product units (VNNI or AMX); None where this
    build has no such check."""
    checks: List[Optional[Callable[[], bool]]] = [
        getattr(torch.cpu, name, None) for name in ("_is_vnni_supported", "_is_amx_tile_supported")
    ]
    return None if None in checks else any(check() for check in checks if check is not None)


def cpu_bf16_units() -> Optional[bool]:
    """Whether torch's own CPU feature check (cpuinfo, which also asks whether the OS enabled the
    registers) finds bf16 matrix units, AVX512_BF16 or AMX; None where this build has no such check."""
    checks: List[Optional[Callable[[], bool]]] = [
        getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    ]
    return None if None in checks else any(check() for check in checks if check is not None)


def version(tensor: torch.Tensor) -> int:
    """The tensor's version counter: it changes with every in-place update of its storage."""
    return tensor._version


def foreach_add_(tensors: Tensors, others: Tensors, alpha: float = 1.0) -> None:
    """tensors[i] += alpha * others[i]."""
    torch._foreach_add_(tensors, others, alpha=alpha)


def foreach_add_scalar_(tensors: Tensors, scalar: float) -> None:
    """tensors[i] += scalar."""
    torch._foreach_add_(tensors, scalar)


def foreach_addcmul_(tensors: Tensors, a: Tensors, b: Tensors, value: float) -> None:
    """tensors[i] += value * a[i] * b[i]."""
    torch._foreach_addcmul_(tensors, a, b, value=value)


def foreach_sqrt(tensors: Tensors) -> List[torch.Tensor]:
    """The square root of each tensor, as new tensors."""
    return list(torch._foreach_sqrt(tensors))


def foreach_addcdiv_(tensors: Tensors, a: Tensors, b: Tensors, value: float) -> None:
    """tensors[i] += value * a[i] / b[i]."""
    torch._foreach_addcdiv_(tensors, a, b, value=value)


# torch.compile's options for CPU kernels that read torch's thread count at each call. Otherwise
# inductor writes the count of the moment it compiles into a kernel whenever that count differs from
# the machine's logical CPUs (as torch's default, the physical cores, does where each core runs two
# threads): the kernel then ignores a later `torch.set_num_threads`, and in a forked child, which must
# run single-threaded (pipeline/bilm_layer/process_state.py), it opens that many threads and hangs.
THREADS_AT_CALL: Dict[str, Union[str, int, bool, Callable[..., Any]]] = {"cpp.dynamic_threads": True}


@contextlib.contextmanager
def recompile_limit(limit: int) -> Iterator[None]:
    """torch.compile may keep up to `limit` compiled graphs per function inside the block."""
    with torch._dynamo.config.patch(recompile_limit=limit):
        yield


def compiler_errors() -> Tuple[Type[BaseException], ...]:
    """The exceptions torch.compile raises when it cannot compile a function (dynamo's base class: a
    backend's failure, such as inductor's, is one), as opposed to errors of the code it runs."""
    return (torch._dynamo.exc.TorchDynamoException,)


def mark_static_address(tensor: torch.Tensor) -> None:
    """Tell torch.compile that `tensor` keeps its address from call to call (CUDA graphs need it)."""
    torch._dynamo.mark_static_address(tensor)
