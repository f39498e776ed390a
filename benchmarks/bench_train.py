"""Training a tagger on a frozen biLM: epoch 1 runs the biLM, later epochs reuse its cached layers.

    python -m benchmarks.bench_train TRAIN.conllu      # original size, 300 sentences, e.g. UD English EWT's train
    python -m benchmarks.bench_train TRAIN.conllu --size small --sentences 1000 --epochs 4

Builds the pipeline from configs/tagger_elmo.cfg (random biLM weights at a published size) and runs the
same update loop as `spacy train`, timing each epoch. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from benchmarks.bench_pipe import write_model
from benchmarks.common import machine

ROOT = Path(__file__).resolve().parents[1]


def read_examples(nlp, path: Path, n: int):
    from spacy.training import Example
    from spacy.training.converters import conllu_to_docs

    docs = conllu_to_docs(path.read_text(encoding="utf8"), n_sents=1, no_print=True)
    examples = []
    for doc in docs:
        examples.append(Example(nlp.make_doc(doc.text), doc))
        if len(examples) == n:
            break
    return examples


def main() -> None:
    from spacy.util import load_config, load_model_from_config, minibatch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="original", choices=["small", "medium", "original"])
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("conllu", type=Path, help="Tagged sentences in CoNLL-U (the XPOS column is the tag).")
    args = parser.parse_args()
    print(machine(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        write_model(args.size, directory)
        config = load_config(
            ROOT / "configs" / "tagger_elmo.cfg",
            overrides={
                "paths.elmo_options": str(directory / "options.json"),
                "paths.elmo_weights": str(directory / "weights.hdf5"),
            },
            interpolate=True,
        )
        nlp = load_model_from_config(config, auto_fill=True)
        examples = read_examples(nlp, args.conllu, args.sentences)
        n_tokens = sum(len(eg.reference) for eg in examples)
        optimizer = nlp.initialize(lambda: examples)
        rng = random.Random(0)
        print(f"{args.size}: tagger on a frozen biLM, {len(examples)} sentences ({n_tokens} tokens) per epoch")
        times = []
        for epoch in range(args.epochs):
            rng.shuffle(examples)
            losses: dict = {}
            start = time.perf_counter()
            for batch in minibatch(examples, size=64):
                nlp.update(batch, sgd=optimizer, losses=losses)
            times.append(time.perf_counter() - start)
            print(f"  epoch {epoch + 1}: {times[-1]:6.2f} s   tagger loss {losses.get('tagger', 0.0):9.1f}")
        later = sum(times[1:]) / max(1, len(times) - 1)
        print(f"  epoch 1 / mean of later epochs: {times[0] / later:.1f}x")


if __name__ == "__main__":
    main()
