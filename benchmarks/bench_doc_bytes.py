"""Bytes a token of `doc._.elmo` through a DocBin for each `store_layers` choice, and how far float16
layers are from float32 ones.

    python -m benchmarks.bench_doc_bytes                       # the bundled biLM, 2,000 tokens
    python -m benchmarks.bench_doc_bytes --tokens 5000 --model PATH

Sizes are deterministic (not timings): `DocBin(store_user_data=True).to_bytes()` of the same docs, less
the bytes of the same DocBin without the elmo component, per token. The deviation rows compare the
default float16 layers with the float32 ones they are rounded from: the layers and a listener's input
(the mean ScalarMix a filled config starts from); the pooled vectors (`token.vector`) are computed
before rounding and kept in float32. Max abs is over all values; max rel over tokens of |a - b| / |b|
(row norms). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import List, Optional, Union

import numpy as np

from benchmarks.common import DEFAULT_TEXT, load_sentences, machine

CHOICES: List[Union[bool, str]] = [True, "float16", False]


def make_nlp(store_layers: Union[bool, str, None], model: Optional[str]):
    import spacy

    nlp = spacy.blank("en")
    if store_layers is not None:
        config = {"@architectures": "spacy-elmo.BiLM.v3", **({"model": model} if model else {})}
        nlp.add_pipe("elmo", config={"model": config, "store_layers": store_layers})
    return nlp


def docbin_bytes(nlp, sentences: List[List[str]]) -> int:
    from spacy.tokens import Doc, DocBin

    docs = [nlp(Doc(nlp.vocab, words=words)) for words in sentences]
    return len(DocBin(store_user_data=True, docs=docs).to_bytes())


def row_relative(a: np.ndarray, b: np.ndarray) -> float:
    norms = np.linalg.norm(b, axis=-1)
    keep = norms > 0
    return float((np.linalg.norm(a - b, axis=-1)[keep] / norms[keep]).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--model", default=None, help="a model directory or archive (default: the bundled biLM)")
    args = parser.parse_args()
    print(machine())
    sentences = load_sentences(args.text, args.tokens)
    n_tokens = sum(len(s) for s in sentences)
    plain = docbin_bytes(make_nlp(None, args.model), sentences)
    print(f"{n_tokens} tokens; DocBin without elmo: {plain / n_tokens:.0f} bytes a token")
    print(f"{'store_layers':>13} | {'bytes/token':>11} | {'vs true':>7}")
    sizes = {}
    for choice in CHOICES:
        sizes[choice] = (docbin_bytes(make_nlp(choice, args.model), sentences) - plain) / n_tokens
        print(f"{str(choice).lower():>13} | {sizes[choice]:11.0f} | {sizes[choice] / sizes[True]:7.2f}")

    from spacy.tokens import Doc

    full = make_nlp(True, args.model)
    devs = {"layers": ([], []), "listener input (mean mix)": ([], [])}
    for words in sentences:
        exact = full(Doc(full.vocab, words=words))._.elmo["layers"]
        half = exact.astype(np.float16).astype(np.float32)  # what "float16" stores, read back
        for name, (x, y) in {
            "layers": (half, exact),
            "listener input (mean mix)": (half.mean(0), exact.mean(0)),
        }.items():
            devs[name][0].append(float(np.abs(x - y).max()))
            devs[name][1].append(row_relative(x, y))
    print(f"\nfloat16 against true (float32) | {'max abs':>9} | {'max rel':>9}")
    print(f"{'vectors (kept in float32)':>30} | {0.0:9.2e} | {0.0:9.2e}")
    for name, (abs_devs, rel_devs) in devs.items():
        print(f"{name:>30} | {max(abs_devs):9.2e} | {max(rel_devs):9.2e}")


if __name__ == "__main__":
    main()
