"""The per-step part of an ELMo run's extra time: `nlp.update` of a config's pipeline on the same batches,
after every doc's layers are cached (a frozen biLM then costs only look-ups and the head's mix).

    D=projects/downstream; C=$D/configs
    python -m benchmarks.bench_step_cost $D/corpus/pos/train-2000-s0.spacy $C/pos_baseline.cfg $C/pos_elmo_encoder.cfg

One thread, as in the grid; batches of `--words` words; each config is timed `--rounds` times,
alternating, and the best round is printed; then the rate of one head-shaped matrix product in thinc
(spaCy's heads) and in torch (the biLM), whose ratio differs between CPUs and moves an ELMo run's time
against the baseline's with it. Prints figures; asserts nothing.
"""

from __future__ import annotations

import os

from projects.downstream.scripts.run_grid import THREAD_VARIABLES  # the standard library only

# One BLAS thread too, as the grid's runs: set before NumPy is imported.
for _name in THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Dict, List  # noqa: E402

import spacy  # noqa: E402
import torch  # noqa: E402
from spacy.tokens import DocBin  # noqa: E402
from spacy.training import Example  # noqa: E402
from spacy.training.batchers import minibatch_by_words  # noqa: E402
from spacy.util import load_config  # noqa: E402

from benchmarks.common import head_and_bilm_gflops, machine  # noqa: E402


def pipeline(config_path: Path, examples_of) -> tuple:
    config = load_config(config_path, overrides={"paths.train": None, "paths.dev": None})
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    examples = examples_of(nlp)
    optimizer = nlp.initialize(lambda: examples)
    return nlp, examples, optimizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("train", type=Path)
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(machine())

    def examples_of(nlp) -> List[Example]:
        docs = list(DocBin().from_disk(args.train).get_docs(nlp.vocab))
        return [Example(nlp.make_doc(doc.text), doc) for doc in docs]

    runs = {path.name: pipeline(path, examples_of) for path in args.configs}
    batches: Dict[str, List] = {}
    for name, (nlp, examples, optimizer) in runs.items():
        shuffled = list(examples)
        random.Random(0).shuffle(shuffled)
        batches[name] = list(minibatch_by_words(shuffled, size=args.words, get_length=lambda eg: len(eg.predicted)))
        for batch in batches[name]:  # warm-up: the first pass fills the caches
            nlp.update(batch, sgd=optimizer, drop=0.1)
    best = {name: float("inf") for name in runs}
    for _ in range(args.rounds):
        for name, (nlp, _, optimizer) in runs.items():
            started = time.perf_counter()
            for step in range(args.steps):
                nlp.update(batches[name][step % len(batches[name])], sgd=optimizer, drop=0.1)
            best[name] = min(best[name], (time.perf_counter() - started) / args.steps)
    for name, seconds in best.items():
        print(f"{name}: {1000 * seconds:.1f} ms per step of {args.words} words")
    head_rate, bilm_rate = head_and_bilm_gflops()
    print(
        f"a head-shaped matrix product: thinc {head_rate:.0f} GFLOP/s (spaCy's heads), torch {bilm_rate:.0f} (the biLM)"
    )


if __name__ == "__main__":
    main()
