"""Resident memory of a pipeline serving documents of an open vocabulary: every word is new.

    python -m benchmarks.bench_memory                     # 5,000 docs, RSS every 500
    python -m benchmarks.bench_memory --docs 20000 --kernel mkl

The default `elmo` component serves sentences of the sample text whose every word carries a suffix
never seen before, through `nlp.pipe` inside spaCy's `memory_zone` (every `--zone` docs, as a service
does, so that spaCy's own string store does not grow), in batches of various heights. Every `--every`
docs it prints the resident memory, what the C allocator reports in use and freed-but-kept (glibc),
and the entries of the package's own bounded caches (token embeddings, character ids, kernel choices),
whose bounds are fixed: after warm-up the memory in use should be flat. Resident memory also counts
the freed blocks glibc keeps for reuse, which batches of ever-changing shapes leave scattered through
its heap: that part levels off later and moves by tens of MB from line to line. glibc returns large
blocks at once when its mmap threshold is fixed (`MALLOC_MMAP_THRESHOLD_=131072` in the environment),
at a cost in speed (docs/results.md). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import string
import time
from typing import Iterator, List

from benchmarks.common import DEFAULT_TEXT, current_rss_mb, load_sentences, machine, malloc_mb


def suffix(n: int) -> str:
    """`n` in base 26, in letters: a suffix no other `n` has."""
    letters = ""
    while True:
        n, digit = divmod(n, 26)
        letters += string.ascii_lowercase[digit]
        if n == 0:
            return letters


def new_texts(sentences: List[List[str]], most: int, seed: int) -> Iterator[str]:
    """Docs of one to `most` sentences of the text (cycled), every word given a suffix not used before."""
    rng = random.Random(seed)
    counter = itertools.count()
    cycle = itertools.cycle(sentences)
    while True:
        words = [f"{word}{suffix(next(counter))}" for _ in range(rng.randint(1, most)) for word in next(cycle)]
        yield " ".join(words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--every", type=int, default=500, help="print RSS every this many docs")
    parser.add_argument("--zone", type=int, default=250, help="docs per nlp.memory_zone()")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sentences", type=int, default=2, help="at most this many sentences per doc")
    parser.add_argument("--max-len", type=int, default=30, help="tokens per sentence at most")
    parser.add_argument("--kernel", choices=["auto", "mkl", "onednn"], default="auto", help="SPACY_ELMO_CPU_KERNEL")
    parser.add_argument("--text", default=DEFAULT_TEXT)
    args = parser.parse_args()
    os.environ["SPACY_ELMO_CPU_KERNEL"] = args.kernel

    import spacy

    from spacy_elmo.elmo.nn import kernels
    from spacy_elmo.pipeline.layers import get_bilm

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    nlp.initialize()
    bilm = get_bilm(nlp.get_pipe("elmo").model)
    texts = new_texts(load_sentences(args.text, 20_000, seed=1, max_len=args.max_len), args.sentences, seed=2)
    print(machine())
    print(
        f"{args.docs} docs of 1-{args.sentences} sentences of new words (at most {args.max_len} tokens each), "
        f"nlp.pipe(batch_size={args.batch_size}), memory_zone every {args.zone}"
    )
    print(
        f"{'docs':>6} {'RSS MB':>8} {'in use MB':>10} {'kept free MB':>13} {'token cache':>12} {'char ids':>9} "
        f"{'kernel choices':>15} {'seconds':>8}"
    )
    start = time.perf_counter()
    served = 0
    while served < args.docs:
        with nlp.memory_zone():
            for _ in nlp.pipe(itertools.islice(texts, args.zone), batch_size=args.batch_size):
                served += 1
                if served % args.every == 0:
                    in_use, kept = malloc_mb() or (float("nan"), float("nan"))
                    print(
                        f"{served:>6} {current_rss_mb():>8.0f} {in_use:>10.0f} {kept:>13.0f} "
                        f"{len(bilm.token_cache):>12} {len(bilm.char_mapper._cache):>9} {len(kernels._choices):>15} "
                        f"{time.perf_counter() - start:>8.1f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
