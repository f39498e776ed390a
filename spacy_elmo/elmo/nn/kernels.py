"""The CPU's matrix products through the faster of torch's two fp32 GEMM libraries, chosen per shape.

torch multiplies float32 matrices on the CPU through MKL (`torch.mm`, `torch.bmm`), and also ships
oneDNN, whose `mkldnn::_linear_pointwise` with a weight packed once by `mkldnn::_reorder_linear_weight`
is what torch's own compiler emits for linear layers on CPUs. Which one is faster depends on the CPU and
the shape (on one CPU oneDNN ran ELMo's LSTM products at twice MKL's rate, on another at the same:
docs/fast_modes.md). So the choice is measured, not tabled: the first time a product of a given shape
(rows rounded up to a power of two, inner and outer size, thread count) runs, both kernels are timed on
it in alternation and the faster is kept for the process; oneDNN must win by `MARGIN` to be chosen, else
the plain MKL product (the one the model always used) stays. `SPACY_ELMO_CPU_KERNEL` = `mkl` or `onednn`
pins the choice (the two differ by float rounding, ~1e-7 relative, so a pinned kernel gives run-to-run
identical bits on a machine whatever its load).

Per-shape state is bounded, so that serving an open vocabulary (batches of every height) levels off:
at most `MAX_CHOICES` remembered choices (forgotten all at once beyond, and remeasured), and oneDNN, which
keeps a primitive per product shape (up to about a thousand), multiplies rows padded with zeros to one of
`HEIGHTS_PER_OCTAVE` heights per power of two (`product_height`; at most 1/8 more rows). A row's result
does not depend on the rows beside it (tests/elmo/nn/test_kernels.py checks it bit for bit).

Only no-grad float32 products on the CPU take this path. With autograd (pretraining, fine-tuning) and
on accelerators the plain torch product runs, as before: a packed oneDNN weight has no gradient. A
packed copy is remade when its weight changes (its version counter, bumped by every in-place update
such as an optimizer step or `load_state_dict`, or new storage), as the token cache is.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch

from .errors import InputError
from .torch_compat import onednn_linear, onednn_linear_add, onednn_linear_available, onednn_pack, version

KERNEL_VARIABLE = "SPACY_ELMO_CPU_KERNEL"
MKL, ONEDNN = "mkl", "onednn"
AUTO = "auto"
# oneDNN is chosen only when its best time is under this fraction of MKL's.
MARGIN = 0.95
# Alternating rounds per measurement, and the time each kernel gets per round.
ROUNDS = 4
ROUND_SECONDS = 0.002

# At most this many remembered choices (a handful per weight and thread count in practice).
MAX_CHOICES = 256
# oneDNN's product heights per power of two above 2 x this many rows (below, every height).
HEIGHTS_PER_OCTAVE = 8

# (product kind, rows bucket, inner size, outer size, threads)
ShapeKey = Tuple[str, int, int, int, int]
_choices: Dict[ShapeKey, str] = {}


def onednn_available() -> bool:
    """Whether this torch build has oneDNN and the two ops the packed path needs."""
    return onednn_linear_available()


def pinned_kernel() -> str:
    """`mkl`, `onednn` or `auto` (measure), from `SPACY_ELMO_CPU_KERNEL`; unset means `auto`."""
    value = os.environ.get(KERNEL_VARIABLE, AUTO).strip().lower() or AUTO
    if value not in (AUTO, MKL, ONEDNN):
        raise InputError(
            f"{KERNEL_VARIABLE}={value!r} is not a CPU kernel; set it to {MKL!r}, {ONEDNN!r} or {AUTO!r} "
            "(measure per shape, the default), or unset it"
        )
    return value


def takes_packed_path(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """No gradient wanted, float32 on the CPU, and oneDNN present: the products where a choice exists."""
    if x.device.type != "cpu" or x.dtype != torch.float32 or weight.dtype != torch.float32:
        return False
    if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad):
        return False
    return onednn_available()


def row_bucket(rows: int) -> int:
    """Rows rounded up to a power of two: one measurement serves products of similar height."""
    return 1 << max(0, rows - 1).bit_length()


def product_height(rows: int) -> int:
    """`rows` rounded up to one of HEIGHTS_PER_OCTAVE heights per power of two (itself up to twice that)."""
    if rows <= 2 * HEIGHTS_PER_OCTAVE:
        return rows
    step = 1 << (rows.bit_length() - HEIGHTS_PER_OCTAVE.bit_length())
    return -(-rows // step) * step


def _padded(x: torch.Tensor, height: int) -> torch.Tensor:
    """`x` `[rows, n]` with zero rows appended up to `height`."""
    return x if x.shape[0] == height else torch.nn.functional.pad(x, (0, 0, 0, height - x.shape[0]))


def clear_choices() -> None:
    """Forget every measured choice (they are remeasured on next use)."""
    _choices.clear()


def choose(key: ShapeKey, plain: Callable[[], torch.Tensor], packed: Callable[[], torch.Tensor]) -> str:
    """The kernel for products of shape `key`: pinned, remembered, or measured now on `plain` vs
    `packed` (the same product through MKL and through oneDNN)."""
    pinned = pinned_kernel()
    if pinned != AUTO:
        return pinned
    choice = _choices.get(key)
    if choice is None:
        choice = _measure(plain, packed)
        if len(_choices) >= MAX_CHOICES:
            _choices.clear()
        _choices[key] = choice
    return choice


def _measure(plain: Callable[[], torch.Tensor], packed: Callable[[], torch.Tensor]) -> str:
    """Best time of each kernel over alternating rounds (A B A B), after one warm-up call each."""
    plain()
    packed()
    start = time.perf_counter()
    plain()
    repeats = max(1, int(ROUND_SECONDS / max(time.perf_counter() - start, 1e-7)))
    best = {MKL: float("inf"), ONEDNN: float("inf")}
    for _ in range(ROUNDS):
        for name, run in ((MKL, plain), (ONEDNN, packed)):
            start = time.perf_counter()
            for _ in range(repeats):
                run()
            best[name] = min(best[name], time.perf_counter() - start)
    return ONEDNN if best[ONEDNN] < MARGIN * best[MKL] else MKL


class PackedWeights:
    """oneDNN copies of a weight (one per leading index, e.g. per direction), remade when it changes.

    Holds no module state: a copied or unpickled owner starts with an empty cache."""

    def __init__(self) -> None:
        self._key: Optional[Tuple[int, int, Tuple[int, ...]]] = None
        self._packed: List[torch.Tensor] = []

    def __deepcopy__(self, memo: Dict[int, object]) -> "PackedWeights":
        return PackedWeights()

    def __getstate__(self) -> Dict[str, object]:
        return {"_key": None, "_packed": []}

    def get(self, weight: torch.Tensor, out_in: Callable[[torch.Tensor], List[torch.Tensor]]) -> List[torch.Tensor]:
        """The packed copies of `out_in(weight)` (each `[out, in]`), packed again when `weight`'s storage
        or version has changed since the last call."""
        key = (weight.data_ptr(), version(weight), tuple(weight.shape))
        if key != self._key:
            with torch.no_grad():
                self._packed = [onednn_pack(w.detach().contiguous()) for w in out_in(weight)]
            self._key = key
        return self._packed


def batched_product(
    x: torch.Tensor,
    weight: torch.Tensor,
    directions: slice,
    cache: PackedWeights,
    bias: Optional[torch.Tensor] = None,
    add: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """x `[D, rows, in]` . weight[directions] (`weight` `[all directions, in, out]`), plus `bias`
    (`[D, out]`) or `add` (`[D, rows, out]`), at most one of the two, `[D, rows, out]`.

    The plain path is one `baddbmm`/`bmm` over the directions (`add` summed inside the product); the
    oneDNN one is a packed product per direction, `add` fused as its post-op."""
    w = weight[directions]

    def plain() -> torch.Tensor:
        if add is not None:
            return torch.baddbmm(add, x, w)
        if bias is not None:
            return torch.baddbmm(bias.unsqueeze(1), x, w)
        return torch.bmm(x, w)

    if not takes_packed_path(x, weight):
        return plain()
    n_dir, rows, inner = x.shape
    height = product_height(rows)

    def packed() -> torch.Tensor:
        copies = cache.get(weight, lambda full: [full[d].t() for d in range(full.shape[0])])[directions]
        if add is not None:
            parts = [
                onednn_linear_add(_padded(x[d], height), _padded(add[d].contiguous(), height), copies[d])
                for d in range(n_dir)
            ]
        else:
            parts = [
                onednn_linear(_padded(x[d], height), copies[d], None if bias is None else bias[d]) for d in range(n_dir)
            ]
        return torch.stack([part[:rows] for part in parts])

    key = (f"bmm{n_dir}", row_bucket(rows), inner, w.shape[-1], torch.get_num_threads())
    return packed() if choose(key, plain, packed) == ONEDNN else plain()


def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], cache: PackedWeights) -> torch.Tensor:
    """`F.linear(x, weight, bias)` (weight `[out, in]`, x `[rows, in]`) through the faster CPU kernel."""

    def plain() -> torch.Tensor:
        return torch.nn.functional.linear(x, weight, bias)

    if x.dim() != 2 or not takes_packed_path(x, weight):
        return plain()

    def packed() -> torch.Tensor:
        padded = _padded(x, product_height(x.shape[0]))
        return onednn_linear(padded, cache.get(weight, lambda w: [w])[0], bias)[: x.shape[0]]

    key = ("linear", row_bucket(x.shape[0]), x.shape[1], weight.shape[0], torch.get_num_threads())
    return packed() if choose(key, plain, packed) == ONEDNN else plain()
