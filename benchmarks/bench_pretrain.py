"""Pretraining speed: tokens per second (per direction, all processes) on real text.

    python -m benchmarks.bench_pretrain DIR [--config FILE (default: the small preset)] [--steps 100]
        [--set training.batch_size=64 --set model.lstm.dim=512 ...] [--inputs-only --rounds 3]

Builds a vocabulary from the first `--files` files of DIR, trains `--steps` steps into a temporary
directory and prints the device and the speed measured after `--warmup` steps (the first steps pay for
allocations). `--inputs-only` times only the host's part of the steps instead: building `--steps` steps'
batches (`HostBatch`) for the CPU, in process CPU time (which other jobs on the machine do not inflate).
Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import List, Tuple

import torch

from benchmarks.common import machine, preset_settings
from spacy_elmo.elmo.nn.chars import CharacterMapper
from spacy_elmo.elmo.pretrain import build_vocabulary, count_tokens, load_config, train
from spacy_elmo.elmo.pretrain.batching import Batch, StreamBatcher, TokenRows
from spacy_elmo.elmo.pretrain.checkpoint import LOG_FILE, MetricsLog
from spacy_elmo.elmo.pretrain.config import PretrainConfig
from spacy_elmo.elmo.pretrain.steps import HostBatch
from spacy_elmo.elmo.pretrain.vocab import Vocabulary


def device_name() -> str:
    """The device pretraining runs on (the trainer takes the GPU when there is one), named."""
    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return "cpu"


def time_step_inputs(
    files: List[Path], vocab: Vocabulary, config: PretrainConfig, steps: int, warmup: int, rounds: int
) -> None:
    """CPU seconds per step of the host's work for a CPU step (`HostBatch.from_batches`, then `to`); each
    round starts from a fresh table and times the `steps` steps after `warmup` untimed ones (early steps
    meet more new tokens)."""
    t = config.training
    sentences = [line.split() for f in files for line in f.read_text(encoding="utf8").splitlines() if line.split()]
    streams = zip(
        StreamBatcher(iter(sentences), vocab, t.batch_size, t.unroll_steps),
        StreamBatcher(iter(sentences[::-1]), vocab, t.batch_size, t.unroll_steps, reverse=True),
    )
    pairs: List[Tuple[Batch, Batch]] = list(islice(streams, warmup + steps))
    timed = pairs[warmup:]
    n_chars = config.options.char_cnn.max_characters_per_token
    cpu = torch.device("cpu")
    tokens = sum(f.n_tokens for f, _ in timed)
    print(f"host work of {len(timed)} steps after {warmup}, batch {t.batch_size} x {t.unroll_steps}", flush=True)
    for r in range(rounds):
        table = TokenRows(CharacterMapper(n_chars))
        for forward, backward in pairs[:warmup]:
            HostBatch.from_batches(forward, backward, table).to(cpu)
        started = time.process_time()
        for forward, backward in timed:
            HostBatch.from_batches(forward, backward, table).to(cpu)
        seconds = time.process_time() - started
        rate = f"{1000 * seconds / len(timed):.2f} ms/step ({tokens / seconds:,.0f} tokens/s)"
        print(f"round {r + 1}: {rate}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "data", help="Directory of one-sentence-per-line .txt files, e.g. $SPACY_ELMO_DATA/pretrain/gutenberg/train."
    )
    parser.add_argument("--config", default=None, help="A pretraining config (default: the small preset).")
    parser.add_argument("--files", type=int, default=2, help="How many files of DATA to train on.")
    parser.add_argument("--vocab-size", type=int, default=50_000)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Config override, e.g. training.batch_size=64 (repeatable).",
    )
    parser.add_argument("--inputs-only", action="store_true", help="Time only the host's part of the steps.")
    parser.add_argument("--rounds", type=int, default=4, help="With --inputs-only: rounds.")
    args = parser.parse_args()
    print(machine(), flush=True)
    print(f"device: {device_name()}", flush=True)

    files = sorted(p for p in Path(args.data).iterdir() if p.suffix == ".txt")[: args.files]
    with tempfile.TemporaryDirectory() as tmp:
        vocab_path = Path(tmp) / "vocab.txt"
        build_vocabulary(count_tokens(files), max_size=args.vocab_size).to_file(vocab_path)
        overrides = {
            "paths.train": [str(f) for f in files],
            "paths.vocab": str(vocab_path),
            "paths.dev": None,
            "training.max_steps": args.steps,
            "logging.log_every": 1,
            "logging.checkpoint_every": args.steps,
            "logging.plot": False,
        }
        for item in args.set:
            key, _, value = item.partition("=")
            try:
                overrides[key] = json.loads(value)
            except json.JSONDecodeError:
                overrides[key] = value
        config = load_config(args.config, overrides) if args.config else preset_settings("small", overrides)
        if args.inputs_only:
            time_step_inputs(files, Vocabulary.from_file(vocab_path), config, args.steps, args.warmup, args.rounds)
            return
        started = time.perf_counter()
        train(config, Path(tmp) / "run", show_progress=False)
        wall = time.perf_counter() - started
        records = [r for r in MetricsLog(Path(tmp) / "run" / LOG_FILE).records() if r["event"] == "train"]
    warm = [r for r in records if r["step"] > args.warmup] or records
    first = records[min(args.warmup, len(records)) - 1] if args.warmup and len(records) > args.warmup else None
    tokens = warm[-1]["tokens"] - (first["tokens"] if first else 0)
    seconds = warm[-1]["elapsed"] - (first["elapsed"] if first else 0)
    o, t = config.options, config.training
    print(
        f"model: lstm {o.lstm.dim}x{o.lstm.n_layers} proj {o.lstm.projection_dim}, char filters "
        f"{o.char_cnn.n_filters}, highway {o.char_cnn.n_highway}; softmax {t.softmax} "
        f"({t.n_negative_samples} negatives) over {args.vocab_size} words; batch {t.batch_size} x "
        f"{t.unroll_steps}; torch threads {torch.get_num_threads()}"
    )
    print(f"steps timed: {len(warm)} (after {args.warmup} warm-up), wall {wall:.1f} s in total")
    print(f"tokens/s (per direction) on {device_name()}: {tokens / seconds:,.0f}")
    print(f"seconds/step: {seconds / max(len(warm), 1):.3f}")
    print(f"final running perplexity: {records[-1]['perplexity']:.1f}")


if __name__ == "__main__":
    main()
