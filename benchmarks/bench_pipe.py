"""`nlp.pipe` with the `elmo` component against the raw biLM on the same text, and one long document.

    python -m benchmarks.bench_pipe                       # small, medium, original at batch 1, 8, 32, 128
    python -m benchmarks.bench_pipe --sizes original --batch-sizes 32 --tokens 3000
    python -m benchmarks.bench_pipe --set lstm.dim=1024 \
        --sizes spacy_elmo/elmo/sources/models/gutenberg-web-2x512/options.json

Random weights at each size (a preset's name or an options.json, `--set` changing any of its keys, the
same for every size), written once per size to a temporary directory. Docs come in
arbitrary (shuffled) order. For each batch size, `BiLM.embed(batch_size=B)` and `nlp.pipe(batch_size=B)`
each run in a fresh subprocess (so that the peak memory is its own), after a short warm-up on other
sentences, with an empty token cache. The long-document figure embeds one doc of `--long-tokens` tokens
without sentence boundaries (the largest size asked for) and prints its peak memory above the loaded
pipeline. On a machine others share, the tokens per CPU-second of the process (`--threads 1`) hold
where tokens/s do not. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

import torch

from benchmarks.common import (
    DEFAULT_TEXT,
    current_rss_mb,
    load_sentences,
    machine,
    peak_rss_mb,  # noqa: E402
    peak_rss_since_reset_mb,
    reset_peak_rss,
)
from spacy_elmo import BiLM, ElmoOptions, preset, save_weights  # noqa: E402
from spacy_elmo.elmo.nn.options import PRESETS, parameter_counts, with_changes
from spacy_elmo.elmo.pretrain.config import parse_changes


def size_options(size: str, changes: Sequence[str]) -> ElmoOptions:
    """A preset's or an options.json's options with `changes` (`lstm.dim=1024`, read as `pretrain`'s
    overrides are)."""
    options = preset(size) if size in PRESETS else ElmoOptions.from_file(size)
    return with_changes(options, parse_changes(changes))


def write_model(options: ElmoOptions, directory: Path) -> None:
    torch.manual_seed(0)
    bilm = BiLM(options)
    bilm.options.to_file(directory / "options.json")
    save_weights(bilm, directory / "weights.hdf5")


def make_nlp(directory: Path):
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe(
        "elmo",
        config={"model": {"@architectures": "spacy-elmo.BiLM.v3", "model": str(directory)}},
    )
    nlp.initialize()
    return nlp


def measure(directory: Path, what: str, batch_size: int, n_tokens: int, text: Path) -> dict:
    """Child process: tokens/s and peak memory of one way of embedding the text."""
    from spacy.tokens import Doc

    from spacy_elmo.pipeline.layers import get_bilm

    nlp = make_nlp(directory)
    bilm = get_bilm(nlp.get_pipe("elmo").model)
    sentences = load_sentences(text, n_tokens, seed=2)
    warm = load_sentences(text, 200, seed=3)
    if what == "pipe":
        list(nlp.pipe([Doc(nlp.vocab, words=s) for s in warm], batch_size=batch_size))
        docs = [Doc(nlp.vocab, words=s) for s in sentences]
        run = lambda: list(nlp.pipe(docs, batch_size=batch_size))  # noqa: E731
    else:
        bilm.embed(warm, batch_size=batch_size)
        run = lambda: bilm.embed(sentences, batch_size=batch_size)  # noqa: E731
    bilm.clear_caches()
    start, cpu_start = time.perf_counter(), time.process_time()
    run()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    n = sum(len(s) for s in sentences)
    return {"tokens_per_s": n / seconds, "tokens_per_cpu_s": n / cpu_seconds, "peak_mb": peak_rss_mb()}


def long_doc(directory: Path, n_tokens: int, text: Path) -> dict:
    """Child process: peak memory of one long doc, above the loaded pipeline."""
    from spacy.tokens import Doc

    nlp = make_nlp(directory)
    words = [w for s in load_sentences(text, n_tokens) for w in s][:n_tokens]
    nlp(Doc(nlp.vocab, words=words[:50]))
    doc = Doc(nlp.vocab, words=words)
    base = current_rss_mb()
    # The process's peak so far is the loading's: count the doc's own peak from here.
    peak = peak_rss_since_reset_mb if reset_peak_rss() else peak_rss_mb
    start = time.perf_counter()
    doc = nlp(doc)
    seconds = time.perf_counter() - start
    return {"tokens": len(doc), "seconds": seconds, "base_mb": base, "peak_mb": peak()}


def child(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", __spec__.name, "--child", *args], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["small", "medium", "original"], help="presets or options.json")
    parser.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE", help="changes to every size's options")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 8, 32, 128])
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per measurement (batch 1 uses a quarter)")
    parser.add_argument("--long-tokens", type=int, default=20000)
    parser.add_argument("--long-only", action="store_true", help="Only the long-doc memory measurement.")
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--no-long", action="store_true", help="Leave out the long-doc measurement.")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default).")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine(), flush=True)
    if args.child:
        directory, what = Path(args.child[0]), args.child[1]
        if what == "long":
            print(json.dumps(long_doc(directory, args.long_tokens, args.text)))
        else:
            batch = int(args.child[2])
            tokens = args.tokens // 4 if batch == 1 else args.tokens
            print(json.dumps(measure(directory, what, batch, tokens, args.text)))
        return
    common_args = ["--tokens", str(args.tokens), "--long-tokens", str(args.long_tokens), "--text", str(args.text)]
    common_args += ["--threads", str(args.threads)]
    with tempfile.TemporaryDirectory() as tmp:
        for i, size in enumerate(args.sizes):
            directory = Path(tmp) / str(i)
            directory.mkdir()
            options = size_options(size, args.set)
            write_model(options, directory)
            weights = sum(parameter_counts(options.lstm, options.char_cnn).values())
            changes = f" with {' '.join(args.set)}" if args.set else ""
            print(f"\n{size}{changes} ({weights / 1e6:.2f} M weights): shuffled sentences of real English")
            print(
                f"{'batch':>6} {'embed tok/s':>12} {'pipe tok/s':>11} {'pipe vs embed':>14} "
                f"{'embed peak MB':>14} {'pipe peak MB':>13} {'pipe tok/CPU-s':>15}"
            )
            for batch in [] if args.long_only else args.batch_sizes:
                raw = child(str(directory), "raw", str(batch), *common_args)
                piped = child(str(directory), "pipe", str(batch), *common_args)
                print(
                    f"{batch:>6} {raw['tokens_per_s']:>12.1f} {piped['tokens_per_s']:>11.1f} "
                    f"{piped['tokens_per_s'] / raw['tokens_per_s'] - 1:>+14.0%} {raw['peak_mb']:>14.0f} "
                    f"{piped['peak_mb']:>13.0f} {piped['tokens_per_cpu_s']:>15.1f}",
                    flush=True,
                )
        if args.no_long:
            return
        r = child(str(directory), "long", *common_args)
        print(
            f"\n{args.sizes[-1]}: one doc of {r['tokens']} tokens, no sentence boundaries: {r['seconds']:.1f} s, "
            f"peak {r['peak_mb'] - r['base_mb']:.0f} MB above the loaded pipeline ({r['peak_mb']:.0f} MB in all)"
        )


if __name__ == "__main__":
    main()
