"""GPU speed: inference tokens/s of the original size at batch 1, 32 and 128 (random weights, real
sentences) and pretraining tokens/s of the `small` preset, fp32 and with TF32 + bf16 + prefetching.

    python -m benchmarks.bench_gpu $SPACY_ELMO_DATA/pretrain/gutenberg/train   # one-sentence-per-line .txt files

About two minutes on an H100. Prints figures; asserts nothing (the GPU's correctness: tests/test_gpu.py).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

import torch

from benchmarks.common import DEFAULT_TEXT, load_sentences, machine
from spacy_elmo import BiLM, preset

REPO = Path(__file__).resolve().parent.parent
Result = Tuple[str, str]


def sentences(n: int) -> List[List[str]]:
    lines = load_sentences(DEFAULT_TEXT, 10**9)
    return [lines[i % len(lines)] for i in range(n)]


def inference_speed(options_name: str = "original") -> List[Result]:
    torch.manual_seed(0)
    bilm = BiLM(preset(options_name)).to("cuda").eval()
    text = sentences(512)
    results = []
    for batch_size in (1, 32, 128):
        subset = text[: max(batch_size * 4, 64)]
        bilm.embed(subset[:batch_size], batch_size=batch_size)  # warm-up
        torch.cuda.synchronize()
        start = time.perf_counter()
        bilm.embed(subset, batch_size=batch_size)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        n_tokens = sum(len(s) for s in subset)
        results.append((f"inference {options_name}, batch {batch_size}", f"{n_tokens / seconds:,.0f} tokens/s"))
    return results


def pretraining_speed(data: Path) -> List[Result]:
    from spacy_elmo.pretrain import build_vocabulary, count_tokens, load_config, train
    from spacy_elmo.pretrain.checkpoint import LOG_FILE, MetricsLog

    files = sorted(p for p in data.iterdir() if p.suffix == ".txt")[:2]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        vocab_path = Path(tmp) / "vocab.txt"
        build_vocabulary(count_tokens(files), max_size=50_000).to_file(vocab_path)
        for label, extra in (
            ("fp32", {}),
            ("tf32 + bf16 + prefetch", {"training.tf32": True, "training.bf16": True, "training.prefetch": 4}),
        ):
            out = Path(tmp) / label.replace(" ", "")
            overrides = {
                "paths.train": [str(f) for f in files],
                "paths.vocab": str(vocab_path),
                "training.max_steps": 60,
                "logging.log_every": 10,
                "logging.checkpoint_every": 1000,
                "logging.plot": False,
                **extra,
            }
            config = load_config(REPO / "configs" / "pretrain_small.cfg", overrides)
            train(config, out, show_progress=False)
            speeds = [r["tokens_per_s"] for r in MetricsLog(out / LOG_FILE).records() if r.get("event") == "train"]
            results.append((f"pretraining small preset, {label}", f"{speeds[-1]:,.0f} tokens/s"))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="Directory of one-sentence-per-line .txt files.")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU: nothing to measure")
    print(machine(), torch.cuda.get_device_name(0), flush=True)
    for name, figure in inference_speed() + pretraining_speed(args.data):
        print(f"{name:<45} {figure}")


if __name__ == "__main__":
    main()
