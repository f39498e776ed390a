"""`nlp.pipe` with the `elmo` component against the raw biLM on the same text, and one long document.

    python -m benchmarks.bench_pipe                       # small, medium, original at batch 1, 8, 32, 128
    python -m benchmarks.bench_pipe --sizes original --batch-sizes 32 --tokens 3000
    python -m benchmarks.bench_pipe --sizes original --fast-modes exact int8 bf16 --threads 2
    python -m benchmarks.bench_pipe --set lstm.dim=1024 \
        --sizes spacy_elmo/elmo/sources/models/gutenberg-web-2x512/options.json

Random weights at each size (a preset's name or an options.json, `--set` changing any of its keys, the
same for every size), written once per size to a temporary directory. Both sides start from the same
tokenized sentences of real English in shuffled order (tokenizing is counted on neither side): `nlp.pipe`
gets one-sentence Docs made before the clock starts, `nlp.pipe(batch_size=B)`; `BiLM.embed` gets the
same batches, each B sentences handed to `embed(batch_size=B)` (embed sorting the whole text at once
pads less than any stream of B docs can). In each fast mode (`--fast-modes`) both run the same
copy, the one the component makes. Each size, mode and batch runs in a fresh subprocess (its own token
cache and kernel choices) that warms both up on other sentences, then times them in turn, `--rounds`
times over, each run from an empty token cache: a busy machine slows both alike, so the ratio of the
best runs holds where the tokens/s do not (beside it: the per-round ratios' range, and the ratio of
CPU seconds, steadier still on a machine others share, with `--threads 1` above all). The
long-document figure embeds one doc of `--long-tokens` tokens without sentence boundaries (the last size
asked for) and prints its peak memory above the loaded pipeline. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import torch

from benchmarks.common import (
    DEFAULT_TEXT,
    current_rss_mb,
    load_sentences,
    machine,
    peak_rss_mb,
    peak_rss_since_reset_mb,
    reset_peak_rss,
)
from spacy_elmo import BiLM, ElmoOptions, preset, save_weights
from spacy_elmo.elmo.nn.fast.fast_bilm import FAST_MODES
from spacy_elmo.elmo.nn.options import PRESETS, parameter_counts, with_changes
from spacy_elmo.elmo.pretrain.config import parse_changes
from spacy_elmo.elmo.util.machine import unit_flags

EXACT = "exact"
HEADER = " batch   mode  embed tok/s  pipe tok/s  pipe / embed        rounds CPU-s ratio"


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


def make_nlp(directory: Path, fast_mode: Optional[str] = None):
    import spacy

    nlp = spacy.blank("en")
    model = {"@architectures": "spacy-elmo.BiLM.v3", "model": str(directory), "fast_mode": fast_mode}
    nlp.add_pipe("elmo", config={"model": model})
    nlp.initialize()
    return nlp


def same_batches(sentences: List[List[str]], batch_size: int) -> List[List[List[str]]]:
    """The sentences in the batches `nlp.pipe(batch_size=...)` reads one-sentence docs in."""
    return [sentences[i : i + batch_size] for i in range(0, len(sentences), batch_size)]


def measure(directory: Path, mode: str, batch_size: int, n_tokens: int, text: Path, rounds: int) -> Dict:
    """Child process: `embed` and `nlp.pipe` in `mode` on the same batches, timed in turn `rounds`
    times; seconds per run of each side, or `unavailable` where the mode cannot run here."""
    import warnings

    from spacy.tokens import Doc

    from spacy_elmo.pipeline.bilm_layer.process_state import PROCESS
    from spacy_elmo.pipeline.layers import get_bilm

    fast_mode = None if mode == EXACT else mode
    nlp = make_nlp(directory, fast_mode)
    exact = get_bilm(nlp.get_pipe("elmo").model)
    assert exact is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = exact if fast_mode is None else PROCESS.fast_copy(exact, fast_mode)  # the component's copy
    if model is None:
        return {"unavailable": str(caught[-1].message) if caught else "not run here"}
    sentences = load_sentences(text, n_tokens, seed=2)
    warm = load_sentences(text, 200, seed=3)
    list(nlp.pipe([Doc(nlp.vocab, words=s) for s in warm], batch_size=batch_size))
    for batch in same_batches(warm, batch_size):
        model.embed(batch, batch_size=batch_size)
    docs = [Doc(nlp.vocab, words=s) for s in sentences]
    batches = same_batches(sentences, batch_size)
    sides: Dict[str, Callable[[], object]] = {
        "embed": lambda: [model.embed(batch, batch_size=batch_size) for batch in batches],
        "pipe": lambda: list(nlp.pipe(docs, batch_size=batch_size)),
    }
    seconds: Dict[str, List[float]] = {name: [] for name in sides}
    cpu_seconds: Dict[str, List[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, run in sides.items():
            exact.clear_caches()
            model.clear_caches()
            start, cpu_start = time.perf_counter(), time.process_time()
            run()
            seconds[name].append(time.perf_counter() - start)
            cpu_seconds[name].append(time.process_time() - cpu_start)
    return {"tokens": sum(len(s) for s in sentences), "seconds": seconds, "cpu_seconds": cpu_seconds}


def ratio_row(batch: int, mode: str, r: Dict) -> str:
    """One row: each side's best tokens/s, the ratio of the bests, the per-round ratios' range, and the
    ratio of the best CPU seconds (steadier where other processes share the cores)."""
    if "unavailable" in r:
        return f"{batch:>6} {mode:>6}  not run here: {r['unavailable']}"
    seconds, cpu = r["seconds"], r["cpu_seconds"]
    embed, pipe = min(seconds["embed"]), min(seconds["pipe"])
    rounds = [e / p for e, p in zip(seconds["embed"], seconds["pipe"])]
    return (
        f"{batch:>6} {mode:>6} {r['tokens'] / embed:>12.1f} {r['tokens'] / pipe:>11.1f} {embed / pipe:>13.3f} "
        f"{min(rounds):>7.3f}-{max(rounds):.3f} {min(cpu['embed']) / min(cpu['pipe']):>11.3f}"
    )


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
    parser.add_argument("--fast-modes", nargs="+", default=[EXACT], choices=[EXACT, *FAST_MODES])
    parser.add_argument("--rounds", type=int, default=3, help="alternating timed rounds of embed and nlp.pipe")
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
            print(json.dumps(measure(directory, what, batch, tokens, args.text, args.rounds)))
        return
    print(f"bf16 / int8 unit flags: {unit_flags()}")
    common_args = ["--tokens", str(args.tokens), "--long-tokens", str(args.long_tokens), "--text", str(args.text)]
    common_args += ["--threads", str(args.threads), "--rounds", str(args.rounds)]
    with tempfile.TemporaryDirectory() as tmp:
        for i, size in enumerate(args.sizes):
            directory = Path(tmp) / str(i)
            directory.mkdir()
            options = size_options(size, args.set)
            write_model(options, directory)
            weights = sum(parameter_counts(options.lstm, options.char_cnn).values())
            changes = f" with {' '.join(args.set)}" if args.set else ""
            print(f"\n{size}{changes} ({weights / 1e6:.2f} M weights): best of {args.rounds} alternating rounds")
            print(HEADER)
            for batch in [] if args.long_only else args.batch_sizes:
                for mode in args.fast_modes:
                    print(ratio_row(batch, mode, child(str(directory), mode, str(batch), *common_args)), flush=True)
        if args.no_long:
            return
        r = child(str(directory), "long", *common_args)
        print(
            f"\n{args.sizes[-1]}: one doc of {r['tokens']} tokens, no sentence boundaries: {r['seconds']:.1f} s, "
            f"peak {r['peak_mb'] - r['base_mb']:.0f} MB above the loaded pipeline ({r['peak_mb']:.0f} MB in all)"
        )


if __name__ == "__main__":
    main()
