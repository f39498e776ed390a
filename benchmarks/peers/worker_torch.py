"""One side of benchmarks/peers/run_peers.py: this package, in one of the variants the runner compares.

    python worker_torch.py --options O --weights W --text T --threads N --variant NAME

Serves the runner as worker_bilm_tf.py does (a batch size per stdin line, one JSON line back: tokens,
seconds; `save N PATH` as there), on the same text in the same consecutive batches, stateless (a zero
state per sentence, as the peer's states reset before each batch).

Variants: `spacy-elmo` (the default: the CPU kernel chosen per shape, elmo/nn/kernels.py), `mkl` (every
product through torch's default MKL path, SPACY_ELMO_CPU_KERNEL=mkl, as before the kernel choice),
`onednn` (every product through oneDNN), `compiled` (the default, with the step's cell arithmetic,
sigmoid/tanh/products/clip, compiled by torch.compile's inductor into one CPU kernel, shapes dynamic as
rows finish), `int8` and `bf16` (the approximate fast modes, elmo/nn/fast/: fbgemm's int8 products; bf16
products on the CPU's bf16 units, which run_peers.py skips where the CPU has none).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

VARIANTS = ("spacy-elmo", "mkl", "onednn", "compiled", "int8", "bf16")
FAST_VARIANTS = ("int8", "bf16")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--options", required=True)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--text", required=True, help="one sentence per line, tokens separated by spaces")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--variant", choices=VARIANTS, default="spacy-elmo")
    args = parser.parse_args()
    if args.variant in ("mkl", "onednn"):
        os.environ["SPACY_ELMO_CPU_KERNEL"] = args.variant

    import numpy as np
    import torch

    from spacy_elmo import load_bilm
    from spacy_elmo.elmo.nn import lstm
    from spacy_elmo.elmo.nn.fast.fast_bilm import make_fast

    torch.set_num_threads(args.threads)
    bilm = load_bilm(args.options, args.weights).eval()
    if args.variant in FAST_VARIANTS:
        bilm = make_fast(bilm, args.variant)
    if args.variant == "compiled":
        plain_cell = lstm.BiLSTMLayer._cell
        compiled = torch.compile(lambda layer, gates, c: plain_cell(layer, gates, c, False), dynamic=True)
        lstm.BiLSTMLayer._cell = lambda self, gates, c, in_place: compiled(self, gates, c)  # type: ignore[method-assign]
    with open(args.text, encoding="utf8") as f:
        sentences = [line.split() for line in f.read().splitlines() if line.strip()]
    print(json.dumps({"ready": True, "torch": torch.__version__}), flush=True)
    for line in sys.stdin:
        if line.startswith("save "):
            _, batch_size, path = line.split()
            first = sentences[: int(batch_size)]
            layers = bilm.embed(first, batch_size=len(first))
            padded = np.zeros((len(first), *layers[0].shape[:1], max(len(s) for s in first), layers[0].shape[-1]))
            for row, out in enumerate(layers):
                padded[row, :, : out.shape[1]] = out
            np.save(path, padded.astype(np.float32))
            print(json.dumps({"saved": path}), flush=True)
            continue
        batch_size = int(line)
        start = time.perf_counter()
        for i in range(0, len(sentences), batch_size):
            bilm.embed(sentences[i : i + batch_size], batch_size=batch_size)
        seconds = time.perf_counter() - start
        print(json.dumps({"tokens": sum(len(s) for s in sentences), "seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
