"""Side by side: this package against the original bilm-tf (and its own variants), same text, batches
and threads, alternating.

    python -m benchmarks.peers.run_peers \
        --bilm-tf ~/src/bilm-tf --peer-python ~/peer-venvs/bilm-tf/bin/python \
        --size original --threads 1 2 --batch-sizes 1 32 --rounds 3

Writes one model (random weights at a preset size, or `--model DIR` with options.json and weights.hdf5)
in the published layout, which both sides load, and the first `--sentences` lines of the text tokenized
once (spaCy's English tokenizer), which both sides read. For each thread count it starts one worker
process per implementation (worker_bilm_tf.py in the peer's Python, worker_torch.py here, each holding
its model), then for each batch size runs a discarded warm-up pass per worker and `--rounds` rounds in
which the workers take turns (A B A B ...), one at a time, on the same batches. First each worker's
activations for the tokens of the first `--check` sentences are compared with the first worker's (the
same model, so they agree to float rounding); see `token_differences` for the positions past each
sentence's end, which are not compared. Prints the CPU with its bf16 / int8 unit flags (the fast modes'
figures depend on them), the load average before each thread count, and per batch size a row of the
worst-best tokens/s of each implementation and the ratio of its best to the first one's (bilm-tf when
given); at the end all rows again, as one markdown table for docs/results.md. A fast mode this CPU cannot
run (bf16 without bf16 units) is said and left out. Asserts nothing. See README.md in this folder for the
setup and the results."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Tuple

from benchmarks.common import DEFAULT_TEXT, cpu_name
from benchmarks.peers.worker_torch import FAST_VARIANTS, VARIANTS
from spacy_elmo.elmo.util.machine import unit_flags

if TYPE_CHECKING:
    import numpy as np

HERE = Path(__file__).resolve().parent


def write_inputs(args: argparse.Namespace, folder: Path) -> Dict[str, Path]:
    """The model files, the tokenized text and a vocabulary of its words (bilm-tf's Batcher wants one;
    its character ids do not depend on it)."""
    import spacy
    import torch

    from spacy_elmo import BiLM, load_bilm, preset
    from spacy_elmo.elmo.formats import save_weights

    paths = {"options": folder / "options.json", "weights": folder / "weights.hdf5", "text": folder / "text.txt"}
    if args.model:
        bilm = load_bilm(args.model / "options.json", args.model / "weights.hdf5")
    else:
        torch.manual_seed(0)
        bilm = BiLM(preset(args.size))
    bilm.options.to_file(paths["options"])
    save_weights(bilm, paths["weights"])
    tokenizer = spacy.blank("en").tokenizer
    lines = [line.strip() for line in args.text.read_text(encoding="utf8").splitlines() if line.strip()]
    sentences = [[t.text for t in tokenizer(line) if not t.is_space] for line in lines[: args.sentences]]
    paths["text"].write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf8")
    words = sorted({w for s in sentences for w in s})
    paths["vocab"] = folder / "vocab.txt"
    paths["vocab"].write_text("\n".join(["<S>", "</S>", "<UNK>", *words]) + "\n", encoding="utf8")
    return paths


def token_differences(got: "np.ndarray", reference: "np.ndarray", lengths: List[int]) -> "np.ndarray":
    """The largest absolute difference per layer between two `[sentences, layers, time, dim]` arrays over
    each sentence's own tokens. Positions past a sentence's end are padding, not tokens, and the sides
    fill them differently: bilm-tf leaves there the embedding of its all-padding character row in layer 0
    (the CNN's biases through the highways and projection: nonzero for a trained model, zero for the
    zero biases of random weights) and zeros in the LSTM layers, where this package writes zeros."""
    import numpy as np

    differences = np.zeros(reference.shape[1], dtype=np.float64)
    for i, length in enumerate(lengths):
        if length:
            gap = np.abs(got[i, :, :length] - reference[i, :, :length]).max(axis=(1, 2))
            differences = np.maximum(differences, gap)
    return differences


class Worker:
    """One implementation in its own process, timing a pass over the text per request."""

    def __init__(self, name: str, command: List[str], threads: int, pythonpath: str = "") -> None:
        self.name = name
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), TF_CPP_MIN_LOG_LEVEL="2")
        if pythonpath:  # the peer's checkout, imported as its README says
            env["PYTHONPATH"] = pythonpath
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.info = self._reply()

    def _reply(self) -> Dict[str, float]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                return json.loads(line)
        raise RuntimeError(f"worker {self.name} ended without answering (exit code {self.process.wait()})")

    def tokens_per_second(self, batch_size: int) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{batch_size}\n")
        self.process.stdin.flush()
        reply = self._reply()
        return reply["tokens"] / reply["seconds"]

    def activations(self, n_sentences: int, path: Path) -> "np.ndarray":
        """The first `n_sentences` sentences' activations, `[n, layers, time, dim]`, padded to the longest
        as the implementation pads (see `token_differences`)."""
        import numpy as np

        assert self.process.stdin is not None
        self.process.stdin.write(f"save {n_sentences} {path}\n")
        self.process.stdin.flush()
        self._reply()
        return np.load(path)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def runnable_variants(variants: List[str]) -> Tuple[List[str], List[str]]:
    """The variants this CPU can run, and a line for each one it cannot (a fast mode without its units:
    bf16 products in emulation would be timed as if they were the mode's)."""
    import torch

    from spacy_elmo.elmo.nn.fast.fast_bilm import unavailable_reason

    kept, skipped = [], []
    for variant in variants:
        reason = unavailable_reason(variant, torch.device("cpu")) if variant in FAST_VARIANTS else None
        if reason is None:
            kept.append(variant)
        else:
            skipped.append(f"{variant}: skipped, {reason}")
    return kept, skipped


def table_header(names: List[str]) -> str:
    """The markdown header of the rows `table_row` prints: tokens/s of each, then each one's ratio."""
    columns = ["threads", "batch", *(f"{n} tok/s" for n in names), *(f"{n} / {names[0]}" for n in names[1:])]
    return "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)


def table_row(threads: int, batch_size: int, rates: Dict[str, List[float]]) -> str:
    """One markdown row: each implementation's worst-best tokens/s over the rounds, and the ratio of its
    best to the first implementation's best."""
    bests = [max(r) for r in rates.values()]
    cells = [str(threads), str(batch_size), *(f"{min(r):,.1f}-{max(r):,.1f}" for r in rates.values())]
    cells += [f"{best / bests[0]:.2f}x" for best in bests[1:]]
    return "| " + " | ".join(cells) + " |"


def start_workers(args: argparse.Namespace, paths: Dict[str, Path], threads: int) -> List[Worker]:
    common = ["--options", str(paths["options"]), "--weights", str(paths["weights"]), "--text", str(paths["text"])]
    common += ["--threads", str(threads)]
    workers = []
    if args.bilm_tf:
        command = [str(args.peer_python), str(HERE / "worker_bilm_tf.py")]
        workers.append(
            Worker("bilm-tf", command + common + ["--vocab", str(paths["vocab"])], threads, str(args.bilm_tf.resolve()))
        )
    if args.allennlp_python:
        command = [str(args.allennlp_python), str(HERE / "worker_allennlp.py")]
        workers.append(Worker("allennlp", command + common, threads))
    for variant in args.variants:
        command = [sys.executable, str(HERE / "worker_torch.py"), "--variant", variant]
        workers.append(Worker(variant, command + common, threads))
    return workers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--text", type=Path, default=DEFAULT_TEXT, help="plain text, one sentence per line (default: the sample)"
    )
    parser.add_argument("--sentences", type=int, default=100, help="the first N lines of the text")
    parser.add_argument("--size", default="original", help="a preset size, random weights")
    parser.add_argument("--model", type=Path, help="a model folder (options.json, weights.hdf5) instead of --size")
    parser.add_argument("--bilm-tf", type=Path, help="a checkout of github.com/allenai/bilm-tf (see README.md)")
    parser.add_argument("--peer-python", type=Path, help="the Python of the peer's virtualenv (setup_peers.sh)")
    parser.add_argument("--allennlp-python", type=Path, help="the Python of the AllenNLP virtualenv (setup_peers.sh)")
    parser.add_argument(
        "--variants", nargs="+", choices=VARIANTS, default=["spacy-elmo"], help="worker_torch.py variants"
    )
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check", type=int, default=8, help="compare the first N sentences' activations")
    args = parser.parse_args()
    if args.bilm_tf and not args.peer_python:
        parser.error("--bilm-tf needs --peer-python, the Python of the virtualenv setup_peers.sh made")
    model = args.model.name if args.model else f"{args.size} size, random weights"
    args.variants, skipped = runnable_variants(args.variants)
    if not (args.variants or args.bilm_tf or args.allennlp_python):
        parser.error("; ".join(skipped) + "; nothing left to run")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_inputs(args, Path(tmp))
        lengths = [len(line.split()) for line in paths["text"].read_text(encoding="utf8").splitlines()]
        n_sentences = len(lengths)
        print(f"CPU: {cpu_name()}, {os.cpu_count()} cores, bf16 / int8 unit flags: {unit_flags()}", flush=True)
        print(f"model: {model}; {n_sentences} sentences", flush=True)
        for line in skipped:
            print(line, flush=True)
        for batch_size in args.batch_sizes:
            if batch_size > n_sentences:
                print(f"batch {batch_size}: more than the {n_sentences} sentences, one batch of {n_sentences}")
        rows: List[str] = []
        for threads in args.threads:
            print(f"\nthreads {threads}, load average before starting: {os.getloadavg()[0]:.2f}", flush=True)
            workers = start_workers(args, paths, threads)
            names = [w.name for w in workers]
            print("  " + "; ".join(f"{w.name}: {json.dumps(w.info)}" for w in workers), flush=True)
            reference = workers[0].activations(args.check, Path(tmp) / "reference.npy")
            for w in workers[1:]:
                got = w.activations(args.check, Path(tmp) / f"{w.name}.npy")
                differences = token_differences(got, reference, lengths[: args.check])
                print(
                    f"  {w.name}: largest difference to {names[0]} over the tokens of {args.check} sentences: "
                    f"{differences.max():.2g} (by layer: {', '.join(f'{d:.2g}' for d in differences)})",
                    flush=True,
                )
            print(table_header(names), flush=True)
            for batch_size in args.batch_sizes:
                for w in workers:
                    w.tokens_per_second(batch_size)
                rates: Dict[str, List[float]] = {w.name: [] for w in workers}
                for _ in range(args.rounds):
                    for w in workers:
                        rates[w.name].append(w.tokens_per_second(batch_size))
                rows.append(table_row(threads, batch_size, rates))
                print(rows[-1], flush=True)
            for w in workers:
                w.close()
        print("\nall rows, tokens/s worst-best over the rounds:\n" + table_header(names), *rows, sep="\n")
    print(f"\nrun time: {(time.perf_counter() - started) / 60:.1f} min (the model's writing and loading included)")


if __name__ == "__main__":
    main()
