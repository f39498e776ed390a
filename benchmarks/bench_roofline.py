"""The exact path against this machine's own limits: the best sgemm at batch 32, memory bandwidth at batch 1.

    python -m benchmarks.bench_roofline                          # original size, 2 threads, 3 rounds
    python -m benchmarks.bench_roofline --threads 1 --rounds 5
    python -m benchmarks.bench_roofline --min-input-rows 256 1   # input chunks of >= 256 rows against the old

In one run, in alternating rounds (stream, products, exact path, then again), so that a busy machine
slows every figure alike; each figure is the best of its rounds:

- the stream bandwidth: STREAM's copy and triad (bytes counted as STREAM counts them) over arrays far
  beyond the last-level cache, with the given thread count; the better of the two is the bandwidth;
- the fp32 rate of each of the LSTM's products at batch 32, on the shapes the exact path multiplies
  (both directions; the input product in the chunk the step loop computes it in), through MKL
  (`torch.bmm` on the stored `[in, out]` weights), through oneDNN (the packed copy, elmo/nn/kernels.py)
  and, a candidate the exact path does not use, through MKL's packed copy; and of a large square
  product; the best of them all is "the best sgemm";
- the exact path's tokens/s (`BiLM.embed`, random weights, real sentences) at batch 1 and 32.

It prints the exact path's GFLOP/s at batch 32 and its fraction of the best sgemm, and at batch 1 the
bytes a token streams (every recurrent and projection weight, once per step) over the bandwidth: the
roofline in tokens/s, and the fraction of it reached. "products alone" is the tokens/s the LSTM's
products would give at their best measured rates, with the char CNN at the best sgemm rate: what bounds
the exact path when its products are as fast as the libraries make them. `--min-input-rows` times the
exact path with other least heights of its input-product chunks too (elmo/nn/lstm.py's
`MIN_INPUT_ROWS`, set only here; 1 is the chunking before it). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import torch

from benchmarks.common import DEFAULT_TEXT, flops_per_token, load_sentences, machine
from spacy_elmo import BiLM, preset  # noqa: E402
from spacy_elmo.elmo.nn import lstm  # noqa: E402
from spacy_elmo.elmo.nn.kernels import onednn_available  # noqa: E402
from spacy_elmo.elmo.nn.lstm import CPU_INPUT_GATES_BUDGET, MIN_INPUT_ROWS, N_DIRECTIONS, input_chunk_steps  # noqa: E402
from spacy_elmo.elmo.nn.options import ElmoOptions  # noqa: E402
from spacy_elmo.elmo.nn.torch_compat import onednn_linear, onednn_pack  # noqa: E402

FLOAT_BYTES = 4
# STREAM's kernels: bytes moved per element (reads + writes, as STREAM counts them).
STREAM_BYTES_PER_ELEMENT = {"copy": 2 * FLOAT_BYTES, "triad": 3 * FLOAT_BYTES}
# Each stream array is this many times the last-level cache (STREAM asks for at least 4x in all).
ARRAYS_PER_CACHE = 2
SQUARE = 2048


@dataclass(frozen=True)
class Product:
    """One matrix product per direction: `rows` x `inner` times `inner` x `outer`."""

    name: str
    rows: int
    inner: int
    outer: int

    def flops(self) -> float:
        return 2.0 * self.rows * self.inner * self.outer


def streamed_bytes_per_token(options: ElmoOptions) -> float:
    """Bytes of weights a token streams at batch 1: every recurrent and projection weight of every layer
    and direction, once per step (the input products span many steps, the char CNN a whole batch)."""
    lstm = options.lstm
    per_direction = lstm.projection_dim * 4 * lstm.dim + lstm.dim * lstm.projection_dim
    return float(FLOAT_BYTES * lstm.n_layers * N_DIRECTIONS * per_direction)


def roofline_tokens_per_s(options: ElmoOptions, bandwidth_gbs: float) -> float:
    """Tokens/s at batch 1 if streaming the weights at `bandwidth_gbs` were all a step cost."""
    return bandwidth_gbs * 1e9 / streamed_bytes_per_token(options)


def stream_gbs(kernel: str, elements: int, seconds: float) -> float:
    """GB/s of one STREAM `kernel` pass over `elements` floats per array in `seconds`."""
    return STREAM_BYTES_PER_ELEMENT[kernel] * elements / seconds / 1e9


def lstm_products(options: ElmoOptions, batch: int) -> List[Product]:
    """The LSTM's products per direction at a batch of `batch` full rows, as the step loop runs them."""
    lstm = options.lstm
    proj, gates = lstm.projection_dim, 4 * lstm.dim
    return [
        Product("input", batch * input_chunk_steps(CPU_INPUT_GATES_BUDGET, N_DIRECTIONS, batch, gates), proj, gates),
        Product("recurrent", batch, proj, gates),
        Product("projection", batch, lstm.dim, proj),
    ]


def products_bound_tokens_per_s(options: ElmoOptions, rates: Dict[str, float], best: float) -> float:
    """Tokens/s if each LSTM product ran at its measured rate (GFLOP/s by product name) and the rest of
    the model (char CNN, highways) at `best`: a token's share of each product's FLOPs."""
    lstm = options.lstm
    proj, gates = lstm.projection_dim, 4 * lstm.dim
    per_token = {"input": proj * gates, "recurrent": proj * gates, "projection": lstm.dim * proj}
    scale = 2.0 * lstm.n_layers * N_DIRECTIONS
    lstm_seconds = sum(scale * macs / (rates[name] * 1e9) for name, macs in per_token.items())
    rest = flops_per_token(options) - scale * sum(per_token.values())
    return 1.0 / (lstm_seconds + rest / (best * 1e9))


def _best_seconds(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` calls, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def last_level_cache_bytes() -> int:
    """The largest CPU cache's size as Linux reports it (sysfs), or 64 MiB, a large server CPU's, where
    it cannot be read; the stream arrays are twice it unless `--stream-mb` sets their size."""
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        sizes.append(int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text))
    return max(sizes, default=64 << 20)


class Stream:
    """STREAM's copy (a = b) and triad (a = b + s c) over three arrays of `elements` floats."""

    def __init__(self, elements: int) -> None:
        self.elements = elements
        self.a, self.b, self.c = (torch.full((elements,), value) for value in (1.0, 2.0, 0.5))

    def measure(self, repeat: int = 5) -> Dict[str, float]:
        copy = _best_seconds(lambda: self.a.copy_(self.b), repeat)
        triad = _best_seconds(lambda: torch.add(self.b, self.c, alpha=3.0, out=self.a), repeat)
        return {"copy": stream_gbs("copy", self.elements, copy), "triad": stream_gbs("triad", self.elements, triad)}


def mkl_packed_available() -> bool:
    """Whether this torch build has MKL's packed sgemm (`mkl::_mkl_linear`, what torch's compiler emits
    for linear layers where oneDNN is off): a third kernel the exact path does not use, timed as a
    candidate."""
    return torch.backends.mkl.is_available() and hasattr(torch.ops.mkl, "_mkl_linear")


def _per_direction(products: List[Callable[[], torch.Tensor]]) -> Callable[[], torch.Tensor]:
    """One product per direction, stacked as elmo/nn/kernels.py stacks oneDNN's."""
    return lambda: torch.stack([product() for product in products])


def product_rates(options: ElmoOptions, batch: int, repeat: int = 5) -> Dict[Tuple[str, str], float]:
    """GFLOP/s of each LSTM product (both directions, as the exact path runs them) and of a large square
    product, through MKL (`bmm`), oneDNN's packed copy and MKL's packed copy where torch has them:
    (product, kernel) -> GFLOP/s."""
    rates: Dict[Tuple[str, str], float] = {}
    shapes = lstm_products(options, batch) + [Product("square", SQUARE, SQUARE, SQUARE)]
    with torch.inference_mode():
        for product in shapes:
            directions = 1 if product.name == "square" else N_DIRECTIONS
            x = torch.randn(directions, product.rows, product.inner)
            w = torch.randn(directions, product.inner, product.outer) / product.inner**0.5
            out_in = [w[d].t().contiguous() for d in range(directions)]
            kernels: Dict[str, Callable[[], torch.Tensor]] = {"MKL": lambda x=x, w=w: torch.bmm(x, w)}
            if onednn_available():
                packed = [onednn_pack(weight) for weight in out_in]
                kernels["oneDNN"] = _per_direction(
                    [partial(onednn_linear, x[d], packed[d], None) for d in range(directions)]
                )
            if mkl_packed_available():
                rows = product.rows
                packed_mkl = [torch.ops.mkl._mkl_reorder_linear_weight(weight, rows) for weight in out_in]
                kernels["MKL packed"] = _per_direction(
                    [
                        partial(torch.ops.mkl._mkl_linear, x[d], packed_mkl[d], out_in[d], None, rows)
                        for d in range(directions)
                    ]
                )
            for kernel, run in kernels.items():
                rates[product.name, kernel] = directions * product.flops() / _best_seconds(run, repeat) / 1e9
    return rates


class ExactPath:
    """`BiLM.embed` of the preset at random weights on real sentences, warmed up on other sentences (the
    CPU kernel choices measured), the token cache emptied before each timed call so that every call
    runs the char CNN on its words as the first did."""

    def __init__(self, size: str, tokens: int, text: Path) -> None:
        torch.manual_seed(0)
        self.bilm = BiLM(preset(size)).eval()
        self.sentences = load_sentences(text, tokens)
        warm = load_sentences(text, 200, seed=1)
        for batch in (1, 32):
            self.bilm.embed(warm, batch_size=batch)

    def tokens_per_s(self, batch: int, min_input_rows: int = MIN_INPUT_ROWS) -> float:
        """Tokens/s at `batch` (batch 1 on a quarter of the sentences), the input products' chunks of at
        least `min_input_rows` rows (1: as the step loop chunked them before; set only here)."""
        sentences = self.sentences if batch > 1 else self.sentences[: max(1, len(self.sentences) // 4)]
        saved = lstm.MIN_INPUT_ROWS
        lstm.MIN_INPUT_ROWS = min_input_rows
        self.bilm.clear_caches()
        try:
            start = time.perf_counter()
            self.bilm.embed(sentences, batch_size=batch)
            seconds = time.perf_counter() - start
        finally:
            lstm.MIN_INPUT_ROWS = saved
        return sum(len(s) for s in sentences) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="original")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per batch-32 measurement (batch 1: a quarter)")
    parser.add_argument("--stream-mb", type=int, default=0, help="MB per stream array (default: twice the LLC)")
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument(
        "--min-input-rows",
        type=int,
        nargs="+",
        default=[MIN_INPUT_ROWS],
        help="the exact path with input-product chunks of at least these rows, alternating (1: the old "
        "chunking; the first is reported)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    options = preset(args.size)
    cache = last_level_cache_bytes()
    elements = (args.stream_mb << 20 if args.stream_mb else ARRAYS_PER_CACHE * cache) // FLOAT_BYTES
    print(machine(), flush=True)
    print(
        f"{args.size}, {torch.get_num_threads()} threads, {args.rounds} rounds; last-level cache "
        f"{cache / 2**20:.0f} MiB, stream arrays {elements * FLOAT_BYTES / 2**20:.0f} MiB each",
        flush=True,
    )
    stream = Stream(elements)
    exact = ExactPath(args.size, args.tokens, args.text)
    bandwidth: Dict[str, float] = {}
    rates: Dict[Tuple[str, str], float] = {}
    speed: Dict[Tuple[int, int], float] = {}
    for _ in range(args.rounds):
        for kernel, value in stream.measure().items():
            bandwidth[kernel] = max(bandwidth.get(kernel, 0.0), value)
        for key, value in product_rates(options, 32).items():
            rates[key] = max(rates.get(key, 0.0), value)
        for batch in (1, 32):
            for least in args.min_input_rows:
                key = (least, batch)
                speed[key] = max(speed.get(key, 0.0), exact.tokens_per_s(batch, least))
    report(options, bandwidth, rates, {batch: speed[args.min_input_rows[0], batch] for batch in (1, 32)})
    if len(args.min_input_rows) > 1:
        print("\ninput-product chunks of at least   tokens/s at batch 1, 32")
        for least in args.min_input_rows:
            print(f"  {least:>10} rows {speed[least, 1]:22.0f} {speed[least, 32]:8.0f}")


def report(
    options: ElmoOptions, bandwidth: Dict[str, float], rates: Dict[Tuple[str, str], float], speed: Dict[int, float]
) -> None:
    """Print the figures of issue 69's point 4 from the best of each measurement's rounds."""
    print(f"\nstream: copy {bandwidth['copy']:.1f} GB/s, triad {bandwidth['triad']:.1f} GB/s")
    print(f"\nfp32 products at batch 32, GFLOP/s ({'rows x inner x outer':>20}; both directions):")
    kernels = sorted({kernel for _, kernel in rates})
    shapes = {p.name: p for p in lstm_products(options, 32) + [Product("square", SQUARE, SQUARE, SQUARE)]}
    for name, p in shapes.items():
        cells = "  ".join(f"{kernel} {rates[name, kernel]:6.1f}" for kernel in kernels)
        print(f"  {name:<11} {p.rows:>6} x {p.inner:>5} x {p.outer:>5}  {cells}")
    best = max(rates.values())
    by_product = {name: max(rates[name, kernel] for kernel in kernels) for name in shapes}
    gflops = speed[32] * flops_per_token(options) / 1e9
    bound = products_bound_tokens_per_s(options, by_product, best)
    print(f"\nbatch 32: exact {speed[32]:.0f} tokens/s = {gflops:.1f} GFLOP/s = {gflops / best:.2f} of the best sgemm ")
    print(f"  ({best:.1f} GFLOP/s); products alone at their own rates: {bound:.0f} tokens/s ({speed[32] / bound:.2f})")
    band = max(bandwidth.values())
    roof = roofline_tokens_per_s(options, band)
    print(
        f"batch 1: exact {speed[1]:.0f} tokens/s; {streamed_bytes_per_token(options) / 1e6:.1f} MB streamed a token "
        f"at {band:.1f} GB/s = roofline {roof:.0f} tokens/s; {speed[1] / roof:.2f} of it"
    )


if __name__ == "__main__":
    main()
