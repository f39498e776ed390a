"""`nlp.pipe(n_process=N)` with the bundled model: workers on one torch thread each (the package's
default in a worker) against workers on torch's default count (OMP_NUM_THREADS set, which the package
leaves alone), and one process for reference, alternating rounds.

    python -m benchmarks.bench_workers                            # spawn, 2 workers, 2 rounds
    python -m benchmarks.bench_workers --start-method fork --n-process 4 --repeat 20

Each measurement runs in a fresh interpreter (the start method can be set once per process). A call of
`nlp.pipe` with workers starts them (spaCy starts its workers per call), so the figure includes their
start-up; `--repeat` (how many copies of the text) makes that share small. Prints figures; asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

from benchmarks.common import DEFAULT_TEXT, machine


def measure(start_method: str, n_process: int, repeat: int, batch_size: int, text: Path) -> Dict[str, float]:
    """Child process: tokens/s of one `nlp.pipe` call over the text `repeat` times."""
    import spacy

    multiprocessing.set_start_method(start_method, force=True)
    lines = [line.strip() for line in text.read_text(encoding="utf8").splitlines() if line.strip()] * repeat
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    nlp("A first document loads the model .")
    start = time.perf_counter()
    tokens = sum(len(doc) for doc in nlp.pipe(lines, n_process=n_process, batch_size=batch_size))
    seconds = time.perf_counter() - start
    return {"tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds}


def run_child(args: argparse.Namespace, n_process: int, omp: Optional[str]) -> Dict[str, float]:
    env = {name: value for name, value in os.environ.items() if name != "OMP_NUM_THREADS"}
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    command = [sys.executable, "-m", __spec__.name, "--child", "--start-method", args.start_method]
    command += ["--n-process", str(n_process), "--repeat", str(args.repeat), "--batch-size", str(args.batch_size)]
    out = subprocess.run([*command, "--text", str(args.text)], capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start-method", default="spawn", choices=multiprocessing.get_all_start_methods())
    parser.add_argument("--n-process", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=10, help="copies of the text in one call")
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.start_method, args.n_process, args.repeat, args.batch_size, args.text)))
        return
    import torch

    threads = str(torch.get_num_threads())
    print(machine())
    print(f"{args.start_method}, {args.n_process} workers, text x{args.repeat}, batch {args.batch_size}")
    rows = [
        ("one process (torch's default threads)", 1, None),
        (f"{args.n_process} workers, one thread each (default)", args.n_process, None),
        (f"{args.n_process} workers, {threads} threads each (OMP_NUM_THREADS)", args.n_process, threads),
    ]
    for round_ in range(1, args.rounds + 1):
        for name, n_process, omp in rows:
            result = run_child(args, n_process, omp)
            print(f"round {round_}  {name:<48} {result['tokens_per_s']:>8,.0f} tokens/s ({result['seconds']:.1f} s)")


if __name__ == "__main__":
    main()
