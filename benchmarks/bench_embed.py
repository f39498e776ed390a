"""How long a frozen biLM takes over a run's training and dev docs: the one-time part of an ELMo run's
extra time in the table (the layers are cached after it).

    C=projects/downstream/corpus/pos
    python -m benchmarks.bench_embed $C/train-2000-s0.spacy $C/dev.spacy

One thread, as in the grid; the bundled default biLM unless --options/--weights are given. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Dict, List

import spacy
import torch
from spacy.tokens import DocBin

from benchmarks.common import machine
from spacy_elmo.elmo.nn.fast.fast_bilm import FAST_MODE_SETTINGS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help=".spacy files, embedded one after the other")
    parser.add_argument("--options", default=None)
    parser.add_argument("--weights", default=None)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--fast-mode", default=None, choices=FAST_MODE_SETTINGS, help="default: the exact biLM")
    parser.add_argument("--max-batch-tokens", type=int, default=4096)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(machine(), f"fast_mode {args.fast_mode}, max_batch_tokens {args.max_batch_tokens}")
    nlp = spacy.blank("en")
    model: Dict[str, Any] = {
        "@architectures": "spacy-elmo.BiLM.v2",
        "options": args.options,
        "weights": args.weights,
        "fast_mode": args.fast_mode,
        "max_batch_tokens": args.max_batch_tokens,
    }
    nlp.add_pipe("elmo", config={"model": model})
    nlp.initialize()
    total_tokens, total_seconds = 0, 0.0
    for path in args.files:
        docs: List = list(DocBin().from_disk(path).get_docs(nlp.vocab))
        n_tokens = sum(len(doc) for doc in docs)
        started = time.perf_counter()
        for _ in nlp.pipe(docs, batch_size=args.batch_size):
            pass
        seconds = time.perf_counter() - started
        total_tokens, total_seconds = total_tokens + n_tokens, total_seconds + seconds
        print(f"{path}: {len(docs):,} docs, {n_tokens:,} tokens, {seconds:.1f} s, {n_tokens / seconds:,.0f} tokens/s")
    print(f"all: {total_tokens:,} tokens, {total_seconds:.1f} s, {total_tokens / total_seconds:,.0f} tokens/s")


if __name__ == "__main__":
    main()
