"""What telling a mix which rows are tokens costs: `apply_to_read_rows` against the mix's own `predict`,
on docs with and without a whitespace token, for the mean pooling (row-wise) and a layer-norm ScalarMix
(which is given the read rows only, so the layers are copied).

    python -m benchmarks.bench_read_rows --docs 1000 --tokens 25

Random layers `[3, n, 1024]` (the original model's width); rounds alternate between the two calls and
the best of --rounds is printed. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from typing import List, Tuple

import numpy as np
import spacy
from spacy.tokens import Doc
from thinc.api import Model

from benchmarks.common import machine
from spacy_elmo.pipeline.architectures import build_scalar_mix_v2
from spacy_elmo.pipeline.layers.pooling import build_pooling_v1
from spacy_elmo.pipeline.layers.read_rows import apply_to_read_rows

WORDS = "the bank of the river was steep and the water ran fast under the old bridge".split()


def compare(mix: Model, docs: List[Doc], layers: List[np.ndarray], rounds: int) -> Tuple[float, float]:
    """Best milliseconds of `mix.predict` and of `apply_to_read_rows`, in alternating rounds after an
    untimed one (the first products of a process are slow)."""
    mix.initialize(X=layers[:2])
    mix.predict(layers)
    apply_to_read_rows(mix, docs, layers)
    plain, told = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        mix.predict(layers)
        middle = time.perf_counter()
        apply_to_read_rows(mix, docs, layers)
        plain.append((middle - start) * 1e3)
        told.append((time.perf_counter() - middle) * 1e3)
    return min(plain), min(told)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--tokens", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    nlp = spacy.blank("en")
    rng = np.random.default_rng(0)
    groups = []
    for whitespace in (False, True):  # all data made before any timing
        texts = [" ".join(rng.choice(WORDS, args.tokens)) for _ in range(args.docs)]
        docs = [nlp.make_doc(t.replace(" ", "\n\n", 1) if whitespace else t) for t in texts]
        groups.append((whitespace, docs, [rng.normal(size=(3, len(d), 1024)).astype(np.float32) for d in docs]))
    for whitespace, docs, layers in groups:
        for name, mix in (
            ("mean pooling", build_pooling_v1("mean")),
            ("layer-norm mix", build_scalar_mix_v2(layer_norm=True)),
        ):
            plain, told = compare(mix, docs, layers, args.rounds)
            print(
                f"{args.docs} docs of {len(docs[0])} tokens, whitespace token: {'yes' if whitespace else 'no '}, "
                f"{name}: predict {plain:.1f} ms, apply_to_read_rows {told:.1f} ms"
            )


if __name__ == "__main__":
    main()
