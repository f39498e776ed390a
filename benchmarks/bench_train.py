"""Training a tagger on a frozen biLM: epoch 1 runs the biLM, later epochs reuse its cached layers; and a
short run, whose steps should embed about what they meet, not the whole corpus first.

    python -m benchmarks.bench_train TRAIN.conllu      # original size, 300 sentences, e.g. UD English EWT's train
    python -m benchmarks.bench_train TRAIN.conllu --size small --sentences 1000 --epochs 4
    python -m benchmarks.bench_train TRAIN.conllu --sentences 20000 --steps 50    # a short run

Builds the pipeline from configs/tagger_elmo.cfg (random biLM weights at a published size) and runs the
same update loop as `spacy train`, timing each epoch (batches of 64 sentences) or, with `--steps`, the
first step and all of them (the config's batcher, as `spacy train` batches). Prints figures; asserts
nothing. Only public calls, so the same file times another checkout of the package
(`PYTHONPATH=OTHER_CHECKOUT python PATH/TO/bench_train.py ...`).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from benchmarks.bench_pipe import size_options, write_model
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
    parser.add_argument("--steps", type=int, default=0, help="A short run of this many steps instead of epochs.")
    parser.add_argument("conllu", type=Path, help="Tagged sentences in CoNLL-U (the XPOS column is the tag).")
    args = parser.parse_args()
    print(machine(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        write_model(size_options(args.size, []), directory)
        config = load_config(
            ROOT / "configs" / "tagger_elmo.cfg",
            overrides={"paths.elmo_model": str(directory)},
            interpolate=True,
        )
        nlp = load_model_from_config(config, auto_fill=True)
        examples = read_examples(nlp, args.conllu, args.sentences)
        n_tokens = sum(len(eg.reference) for eg in examples)
        optimizer = nlp.initialize(lambda: examples)
        rng = random.Random(0)
        if args.steps:
            short_run(nlp, optimizer, examples, args.steps, config, rng)
            return
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


def short_run(nlp, optimizer, examples, steps: int, config, rng: random.Random) -> None:
    """`steps` updates on the config's batcher over the shuffled corpus: the first step's time, all steps'
    time, and how many docs the frozen-layer cache then holds (what the run embedded)."""
    from spacy.util import registry

    batcher = registry.resolve({"batcher": config["training"]["batcher"]})["batcher"]
    rng.shuffle(examples)
    batches = iter(batcher(examples * (1 + steps)))  # a short run; the corpus repeats if it is smaller
    n_tokens = sum(len(eg.reference) for eg in examples)
    print(f"tagger on a frozen biLM, {steps} steps over {len(examples)} sentences ({n_tokens} tokens)")
    losses: dict = {}
    start = time.perf_counter()
    first = 0.0
    met = 0
    for step in range(steps):
        batch = next(batches)
        met += sum(len(eg.reference) for eg in batch)
        nlp.update(batch, sgd=optimizer, losses=losses)
        if step == 0:
            first = time.perf_counter() - start
    total = time.perf_counter() - start
    cached = len(nlp.get_pipe("elmo").cache)
    print(f"  first step: {first:6.2f} s   {steps} steps: {total:6.2f} s   ({met} tokens met)")
    print(f"  docs the cache holds: {cached} of {len(examples)}")


if __name__ == "__main__":
    main()
