"""`dump --engine ray` on a local Ray cluster: tokens/s at 1 and 2 workers (one CPU and one torch thread
each), and one worker's overhead against the plain dump of the same files in one thread.

    python -m benchmarks.bench_ray_dump --tokens 8000 --files 4

The corpus is the public-domain sample (or --text) split into --files files. Cluster start-up is timed
apart; a run's time includes starting its workers and loading the model in each. Prints figures;
asserts nothing. Needs the ray extra.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import List

import torch

from benchmarks.common import DEFAULT_TEXT, load_sentences, machine
from spacy_elmo.elmo.embed import dump_on_ray, write_layers
from spacy_elmo.elmo.sources import DEFAULT_MODEL, reference_to, resolve


def write_corpus(folder: Path, sentences: List[List[str]], n_files: int) -> List[Path]:
    paths = []
    for i in range(n_files):
        path = folder / f"part{i}.txt"
        path.write_text("\n".join(" ".join(s) for s in sentences[i::n_files]) + "\n", encoding="utf8")
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--tokens", type=int, default=8000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    import ray

    torch.set_num_threads(1)
    os.environ.setdefault("SPACY_ELMO_CPU_KERNEL", "mkl")  # the same kernel in every process
    print(machine() + f", ray {ray.__version__}, model {args.model}, kernel {os.environ['SPACY_ELMO_CPU_KERNEL']}")
    sentences = load_sentences(args.text, args.tokens)
    n_tokens = sum(map(len, sentences))
    model = resolve(reference_to(args.model))
    with tempfile.TemporaryDirectory() as tmp:
        inputs = write_corpus(Path(tmp), sentences, args.files)
        bilm = model.load()
        start = time.perf_counter()
        for path in inputs:
            write_layers(bilm, path, Path(tmp) / "plain" / f"{path.stem}.hdf5", args.batch_size)
        plain = time.perf_counter() - start
        print(f"{n_tokens} tokens in {args.files} files; plain dump, 1 thread: {n_tokens / plain:.0f} tokens/s")
        for workers in args.workers:
            start = time.perf_counter()
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            up = time.perf_counter() - start
            start = time.perf_counter()
            dump_on_ray(os.path.join(tmp, "*.txt"), Path(tmp) / f"ray{workers}", model, workers=workers,
                        batch_size=args.batch_size)  # fmt: skip
            took = time.perf_counter() - start
            ray.shutdown()
            line = f"ray, {workers} worker(s): {n_tokens / took:.0f} tokens/s ({took:.1f} s; cluster start {up:.1f} s)"
            if workers == 1:
                line += f"; overhead against the plain dump {100 * (took / plain - 1):+.0f}%"
            print(line)


if __name__ == "__main__":
    main()
