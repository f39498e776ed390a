"""Words/s of `nlp.pipe` against `[nlp] batch_size` (docs per batch) on the bundled biLM: what
`spacy benchmark speed`, `spacy apply` and `spacy evaluate` run, each batching by the config's
`[nlp] batch_size` unless told otherwise.

    python -m benchmarks.bench_batch_size                        # 16 ... 1000 docs, 20,000 words
    python -m benchmarks.bench_batch_size --batch-sizes 32 64 128 --words 50000 --threads 1

One pipeline (`elmo` alone, the biLM being nearly all of a filled pipeline's time), warmed up on the
whole text first (the token cache then holds every word, as in serving); then each batch size pipes
the same sentences, best of `--repeats`. Seconds a batch is what `spacy benchmark speed` waits before
its first figure. Run on an idle machine. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from benchmarks.common import DEFAULT_TEXT, load_sentences, machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--words", type=int, default=20000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 32, 64, 128, 256, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine())
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    sentences = load_sentences(args.text, args.words)
    n_words = sum(len(s) for s in sentences)
    for _ in nlp.pipe(Doc(nlp.vocab, words=words) for words in sentences):
        pass
    print(f"{n_words} words in {len(sentences)} docs; torch threads {torch.get_num_threads()}")
    print(f"{'batch_size':>10} | {'words/s':>8} | {'s a batch':>9}")
    for batch_size in args.batch_sizes:
        best = float("inf")
        for _ in range(args.repeats):
            docs = [Doc(nlp.vocab, words=words) for words in sentences]
            start = time.perf_counter()
            for _ in nlp.pipe(docs, batch_size=batch_size):
                pass
            best = min(best, time.perf_counter() - start)
        per_batch = best / max(1, -(-len(sentences) // batch_size))
        print(f"{batch_size:10d} | {n_words / best:8.0f} | {per_batch:9.2f}")


if __name__ == "__main__":
    main()
