"""`dump`'s file size and time per output option (layers, pool, dtype, compression) on one text.

    python -m benchmarks.bench_dump --repeats 3

The text is the public-domain sample (or --text), tokenized by spaCy's English tokenizer, one sentence
a line; the model the bundled default (or --model). Sizes are deterministic; times (the best of
--repeats, embedding included, one thread) need an idle machine. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Tuple

import torch

from benchmarks.common import DEFAULT_TEXT, load_sentences, machine
from spacy_elmo.elmo.embed import write_layers
from spacy_elmo.elmo.embed.storage import Storage
from spacy_elmo.elmo.nn.layer_choice import OutputChoice
from spacy_elmo.elmo.sources import DEFAULT_MODEL, reference_to, resolve

# (layers, pool, dtype, compression): dump's defaults first, then each option alone, then combined.
OPTIONS: List[Tuple[str, Optional[str], str, Optional[str]]] = [
    ("all", None, "float32", None),
    ("all", None, "float16", None),
    ("all", None, "float32", "gzip"),
    ("all", None, "float32", "lzf"),
    ("all", None, "float16", "gzip"),
    ("top", None, "float32", None),
    ("average", None, "float16", None),
    ("average", None, "float16", "gzip"),
    ("all", "mean", "float32", None),
    ("average", "mean", "float16", None),
    ("average", "mean", "float16", "gzip"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--tokens", type=int, default=10**9, help="at most this many tokens of the text")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--max-batch-tokens", type=int, default=2048)
    args = parser.parse_args()
    torch.set_num_threads(1)
    sentences = load_sentences(args.text, args.tokens)
    bilm = resolve(reference_to(args.model)).load()
    print(machine(), f"model {args.model}, {len(sentences)} sentences, {sum(map(len, sentences))} tokens")
    print("| --layers | --pool | --dtype | --compression | bytes | seconds |")
    print("|---|---|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.txt"
        source.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf8")
        for layers, pool, dtype, compression in OPTIONS:
            target = Path(tmp) / "out.hdf5"
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                write_layers(
                    bilm,
                    source,
                    target,
                    output=OutputChoice(layers, pool),
                    storage=Storage(dtype, compression),
                    max_batch_tokens=args.max_batch_tokens,
                )
                times.append(time.perf_counter() - start)
            size = target.stat().st_size
            print(f"| {layers} | {pool or 'none'} | {dtype} | {compression or 'none'} | {size:,} | {min(times):.2f} |")


if __name__ == "__main__":
    main()
