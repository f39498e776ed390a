"""Speed and memory of `BiLM.embed` at the published sizes, against this machine's own limit.

    python -m benchmarks.bench_bilm                       # small, medium, original at batch 1, 8, 32, 64, 128
    python -m benchmarks.bench_bilm --sizes original --batch-sizes 32 --tokens 3000
    python -m benchmarks.bench_bilm --sizes original --batch-sizes 1 32 --time-loops step wavefront --rounds 2

Random weights at the published sizes (the speed does not depend on the values). Each (size, batch)
runs in a fresh subprocess so that its peak memory is its own. For each size the script also prints the
FLOPs per token, the machine's best fp32 matmul rate (the faster of MKL and oneDNN, the two kernels
elmo/nn/kernels.py chooses between, on large square matrices, measured in the same run) and the fraction
of it the model reaches, and a roofline: the time the model's own matrix
products and convolutions need on exactly the shapes of the run at batch 32 (sentences sorted by length,
the recurrent products shrinking as rows finish), measured with torch in the same process.
`--time-loops` times each of the LSTM's time loops (elmo/nn/time_loops/dispatch.py) in alternating rounds.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import torch

from benchmarks.common import DEFAULT_TEXT, flops_per_token, load_sentences, machine, matmul_gflops, peak_rss_mb
from spacy_elmo import BiLM, preset  # noqa: E402
from spacy_elmo.elmo.nn.kernels import onednn_available  # noqa: E402
from spacy_elmo.elmo.nn.run_options import AUTO, TIME_LOOPS, RunOptions  # noqa: E402


def _timed(fn, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def onednn_gflops(size: int = 2048, repeat: int = 10) -> float:
    """oneDNN's fp32 rate (GFLOP/s) on large square matrices, the weight packed once; 0 without oneDNN."""
    if not onednn_available():
        return 0.0
    a = torch.randn(size, size)
    packed = torch.ops.mkldnn._reorder_linear_weight(torch.randn(size, size), size)
    with torch.inference_mode():
        _timed(lambda: torch.ops.mkldnn._linear_pointwise(a, packed, None, "none", [], ""))  # warm-up
        seconds = _timed(lambda: torch.ops.mkldnn._linear_pointwise(a, packed, None, "none", [], ""), repeat)
    return 2 * size**3 / seconds / 1e9


def roofline_seconds(options, sentences: List[List[str]], batch_size: int) -> float:
    """Seconds the model's matmuls and convolutions alone take on this run's shapes."""
    cnn = options.char_cnn
    lstm = options.lstm
    proj, cell, n_filters = options.projection_dim, lstm.dim, cnn.n_filters
    lengths = sorted((len(s) + 2 for s in sentences), reverse=True)
    convs = [torch.nn.Conv1d(cnn.embedding_dim, n, w) for w, n in cnn.filters]
    w_hw = torch.randn(n_filters, n_filters)
    w_proj = torch.randn(n_filters, proj)
    # Both directions side by side, as the model computes them (elmo/nn/lstm.py).
    w_in = torch.randn(2, proj, 4 * cell)
    w_rec = torch.randn(2, proj, 4 * cell)
    w_p = torch.randn(2, cell, proj)
    total = 0.0
    with torch.inference_mode():
        for start in range(0, len(lengths), batch_size):
            batch = lengths[start : start + batch_size]
            n_tok = sum(batch)
            chars = torch.randn(n_tok, cnn.embedding_dim, cnn.max_characters_per_token)
            total += sum(_timed(lambda c=c, chars=chars: c(chars)) for c in convs)
            x = torch.randn(n_tok, n_filters)
            total += 2 * cnn.n_highway * _timed(lambda x=x: x @ w_hw)
            if n_filters != proj:
                total += _timed(lambda x=x: x @ w_proj)
            xp = torch.randn(2, n_tok, proj)
            total += lstm.n_layers * _timed(lambda xp=xp: torch.bmm(xp, w_in))
            step_time = 0.0
            for t in range(batch[0]):
                n = sum(1 for length in batch if length > t)
                h = torch.randn(2, n, proj)
                m = torch.randn(2, n, cell)
                step_time += _timed(lambda h=h: torch.bmm(h, w_rec)) + _timed(lambda m=m: torch.bmm(m, w_p))
            total += lstm.n_layers * step_time
    return total


def run_single(size: str, batch_size: int, n_tokens: int, text: Path, time_loop: str) -> Dict[str, float]:
    torch.manual_seed(0)
    options = preset(size)
    bilm = BiLM(options).eval()
    sentences = load_sentences(text, n_tokens)
    n = sum(len(s) for s in sentences)
    warm = load_sentences(text, 200, seed=1)
    run = RunOptions(time_loop=time_loop)
    bilm.embed(warm, batch_size=batch_size, run=run)
    seconds = _timed(lambda: bilm.embed(sentences, batch_size=batch_size, run=run))
    return {"tokens": n, "seconds": seconds, "tokens_per_s": n / seconds, "peak_mb": peak_rss_mb()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["small", "medium", "original"])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 8, 32, 64, 128])
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per measurement (batch 1 uses a quarter)")
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--time-loops", nargs="+", default=[AUTO], choices=TIME_LOOPS, help="LSTM time loops to time")
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds over the time loops")
    parser.add_argument("--single", nargs=3, metavar=("SIZE", "BATCH", "LOOP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    print(machine(), flush=True)
    if args.single:
        size, batch = args.single[0], int(args.single[1])
        tokens = args.tokens // 4 if batch == 1 else args.tokens
        print(json.dumps(run_single(size, batch, tokens, args.text, args.single[2])))
        return
    mkl, onednn = matmul_gflops(), onednn_gflops()
    rate = max(mkl, onednn)
    print(
        f"threads: {torch.get_num_threads()}   large fp32 matmul: MKL {mkl:.1f}, oneDNN {onednn:.1f} GFLOP/s "
        f"(best sgemm {rate:.1f})"
    )
    for size in args.sizes:
        options = preset(size)
        fpt = flops_per_token(options)
        sentences = load_sentences(args.text, args.tokens)
        n = sum(len(s) for s in sentences)
        roof = n / roofline_seconds(options, sentences, 32)
        print(
            f"\n{size}: {fpt / 1e6:.1f} MFLOP/token; roofline at batch 32 (its own matmuls + convs): "
            f"{roof:.0f} tokens/s"
        )
        print(
            f"{'batch':>6} {'loop':>10} {'tokens/s':>10} {'GFLOP/s':>9} {'of best sgemm':>14} {'of roofline':>12} "
            f"{'peak MB':>8}"
        )
        for batch in args.batch_sizes:
            for _ in range(args.rounds):
                for loop in args.time_loops:
                    r = _run_in_subprocess(size, batch, loop, args.tokens, args.text)
                    gflops = r["tokens_per_s"] * fpt / 1e9
                    print(
                        f"{batch:>6} {loop:>10} {r['tokens_per_s']:>10.1f} {gflops:>9.1f} {gflops / rate:>13.0%} "
                        f"{r['tokens_per_s'] / roof:>11.0%} {r['peak_mb']:>8.0f}",
                        flush=True,
                    )


def _run_in_subprocess(size: str, batch: int, loop: str, tokens: int, text: Path) -> Dict[str, float]:
    command = [sys.executable, "-m", __spec__.name, "--single", size, str(batch), loop]
    command += ["--tokens", str(tokens), "--text", str(text)]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
