"""Tokens/s of an ELMoForManyLangs model against a bilm-tf model of the same size, through `BiLM.embed`.

    python -m benchmarks.bench_formats                                  # small and original, batch 32
    python -m benchmarks.bench_formats --sizes tiny --tokens 300        # a quick check that it runs

Both models have random weights and the sizes of a preset (options.PRESETS: LSTM, projection, filters,
highway layers and char embedding the same); the ELMoForManyLangs one adds its word embedding
(`--word-dim`, 100 as in its released models; 0 for none) and reads characters as code points from a
char.dic made of the text's characters. The two runs alternate, `--repeat` times each, after a warm-up
on other sentences (which fills part of the token cache, as in use); the best time of each is printed.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Callable, List

import torch

from benchmarks.common import DEFAULT_TEXT, cpu_name, load_sentences, machine
from spacy_elmo import BiLM, preset
from spacy_elmo.elmo.manylangs.model import CHAR_SPECIALS, WORD_SPECIALS, ManyLangsBiLM, ManyLangsVocab


def manylangs_vocab(sentences: List[List[str]], word_dim: int) -> ManyLangsVocab:
    """char.dic of the sentences' characters, word.dic of their words (when word_dim > 0)."""
    chars = list(dict.fromkeys([*CHAR_SPECIALS, *(c for s in sentences for t in s for c in t)]))
    words = list(dict.fromkeys([*WORD_SPECIALS, "<bos>", "<eos>", *(t for s in sentences for t in s)]))
    return ManyLangsVocab(
        chars={c: i for i, c in enumerate(chars)}, words={w: i for i, w in enumerate(words)} if word_dim else None
    )


def seconds_of(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["small", "original"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per measurement")
    parser.add_argument("--word-dim", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    args = parser.parse_args()
    print(machine(), flush=True)
    sentences = load_sentences(args.text, args.tokens)
    warm = load_sentences(args.text, 200, seed=1)
    n = sum(len(s) for s in sentences)
    vocab = manylangs_vocab(sentences + warm, args.word_dim)
    print(f"{n} tokens, batch {args.batch_size}, word_dim {args.word_dim}, best of {args.repeat}")
    print(f"{'size':>10} {'bilm-tf tok/s':>14} {'manylangs tok/s':>16} {'ratio':>7}")
    for size in args.sizes:
        torch.manual_seed(0)
        options = preset(size)
        models = {"bilm-tf": BiLM(options).eval(), "manylangs": ManyLangsBiLM(options, vocab, args.word_dim).eval()}
        for model in models.values():
            model.embed(warm, batch_size=args.batch_size)
        seconds = {name: float("inf") for name in models}
        for _ in range(args.repeat):
            for name, model in models.items():
                elapsed = seconds_of(lambda m=model: m.embed(sentences, batch_size=args.batch_size))
                seconds[name] = min(seconds[name], elapsed)
        tf_rate, ml_rate = n / seconds["bilm-tf"], n / seconds["manylangs"]
        print(f"{size:>10} {tf_rate:>14.0f} {ml_rate:>16.0f} {ml_rate / tf_rate:>7.3f}", flush=True)
    print(f"CPU: {cpu_name()}")


if __name__ == "__main__":
    main()
