"""Pretraining speed: tokens per second (per direction, all processes) on real text.

    python benchmarks/bench_pretrain.py [--data DIR] [--config configs/pretrain_small.cfg] [--steps 100]
        [--set training.batch_size=64 --set model.lstm.dim=512 ...]

Builds a vocabulary from the first `--files` files of `--data`, trains `--steps` steps into a temporary
directory and prints the speed measured after `--warmup` steps (the first steps pay for allocations).
Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

from spacy_elmo.pretrain import build_vocabulary, count_tokens, load_config, train
from spacy_elmo.pretrain.checkpoint import LOG_FILE, MetricsLog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine  # noqa: E402

DEFAULT_DATA = str(Path(__file__).resolve().parents[2] / "shared" / "data" / "pretrain" / "gutenberg" / "train")


def device_name() -> str:
    """The device pretraining runs on (the trainer takes the GPU when there is one), named."""
    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return "cpu"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=DEFAULT_DATA, help="Directory of one-sentence-per-line .txt files.")
    parser.add_argument("--config", default=str(Path(__file__).parent.parent / "configs" / "pretrain_small.cfg"))
    parser.add_argument("--files", type=int, default=2, help="How many files of --data to train on.")
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
        config = load_config(args.config, overrides)
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
