"""Tokens/s of the bundled biLM for several CPU chunk sizes of the LSTM's input-gate products
(`CPU_INPUT_GATES_BUDGET` in spacy_elmo/elmo/nn/lstm.py), alternating, after a warm-up pass.

    python -m benchmarks.bench_input_gates projects/downstream/corpus/pos/train-2000-s0.spacy

The .spacy file comes from `python -m spacy project run convert projects/downstream`. One thread;
sentences sorted by length, `--batch-size` per call. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import spacy
import torch
from spacy.tokens import DocBin

import spacy_elmo.elmo.nn.lstm as lstm  # noqa: E402
from benchmarks.common import machine
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import get_bilm  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("docs", type=Path, help="a .spacy file")
    parser.add_argument("--budgets", type=int, nargs="+", default=[1 << 25, 1 << 22, 1 << 20, 1 << 18])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(machine())
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    nlp.initialize()
    bilm = get_bilm(nlp.get_pipe("elmo").model)
    assert bilm is not None
    docs = DocBin().from_disk(args.docs).get_docs(nlp.vocab)
    sentences = sorted(([t.text for t in doc if not t.is_space] for doc in docs), key=len, reverse=True)
    n_tokens = sum(map(len, sentences))
    batches = [sentences[i : i + args.batch_size] for i in range(0, len(sentences), args.batch_size)]
    with torch.inference_mode():
        for batch in batches:  # warm-up: the token cache and the allocator
            bilm.forward_sentences(batch)
        for _ in range(args.rounds):
            for budget in args.budgets:
                lstm.CPU_INPUT_GATES_BUDGET = budget
                started = time.perf_counter()
                for batch in batches:
                    bilm.forward_sentences(batch)
                seconds = time.perf_counter() - started
                print(f"budget {budget:>10,} floats: {n_tokens / seconds:,.0f} tokens/s")


if __name__ == "__main__":
    main()
