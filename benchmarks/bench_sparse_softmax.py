"""Dense vs sparse softmax updates at the original ELMo's vocabulary (793,471 x 512): gradient bytes per
step and the time of the softmax part of a step (sampled loss forward and backward, clipping, Adagrad).

    python -m benchmarks.bench_sparse_softmax [--vocab 793471] [--dim 512] [--rows 2560] [--steps 5]

`--rows` target positions per direction (the original's 128 x 20); 8,192 negatives per step as the
original. Random targets from the same log-uniform distribution as the negatives (natural text repeats
its frequent words similarly). Prints figures only.
"""

from __future__ import annotations

import argparse
import time

import torch

from benchmarks.common import machine
from spacy_elmo.elmo.nn.softmax import LogUniformSampler, Softmax
from spacy_elmo.elmo.pretrain.steps import clip_gradients


def gradient_bytes(softmax: Softmax) -> int:
    total = 0
    for param in softmax.parameters():
        grad = param.grad.coalesce() if param.grad.is_sparse else param.grad
        total += (grad._values().numel() + grad._indices().numel() * 2) * 4 if grad.is_sparse else grad.numel() * 4
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vocab", type=int, default=793_471)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--rows", type=int, default=128 * 20)
    parser.add_argument("--negatives", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{machine()}; softmax {args.vocab:,} x {args.dim}, "
        f"{args.rows} targets x 2 directions, {args.negatives} negatives"
    )
    sampler = LogUniformSampler(args.vocab, args.negatives)
    generator = torch.Generator().manual_seed(0)
    for sparse in (False, True):
        torch.manual_seed(0)
        softmax = Softmax(args.vocab, args.dim)
        optimizer = torch.optim.Adagrad(softmax.parameters(), lr=0.2, initial_accumulator_value=1.0)
        times = []
        for step in range(args.steps + 1):
            negatives, n_tries = sampler.sample(generator)
            targets = sampler.sample(generator)[0][: args.rows]
            hidden = torch.randn(2 * args.rows, args.dim)
            start = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            loss = softmax.sampled_loss(hidden, targets.repeat(2), sampler, negatives, n_tries, sparse=sparse).mean()
            loss.backward()
            clip_gradients(softmax.parameters(), 10.0)
            size = gradient_bytes(softmax)
            optimizer.step()
            if step > 0:  # the first step allocates the optimizer state
                times.append(time.perf_counter() - start)
        print(
            f"{'sparse' if sparse else 'dense':>6}: gradient {size / 2**20:,.1f} MiB per step, "
            f"softmax step {1000 * sorted(times)[len(times) // 2]:,.0f} ms (median of {args.steps})"
        )


if __name__ == "__main__":
    main()
