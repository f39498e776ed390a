"""Two biLM shapes trained from scratch with the same compute (nominal FLOPs), then their held-out
perplexity: does GPU time buy more as a larger model than as more tokens for the default's size? At a
tiny scale, so that it fits a few minutes of a CPU, and with equal FLOPs rather than equal seconds, so
that a loaded machine does not change the answer.

    python -m benchmarks.bench_size_choice --train TRAIN.txt --heldout HELDOUT.txt --base-steps 1000

The two shapes keep the ratio between the default (2 x 512 cells, projection 128, 512 filters) and the
published `small` (2 x 1024, projection 128, 2,048 filters): the base has 1/8 of the default's cells and
filters, the larger one twice its cells and four times its filters, the same projection. The base trains
`--base-steps` steps, the larger one as many as the same FLOPs buy (benchmarks.common's nominal count,
softmax included). `--larger KEY=VALUE` changes the larger shape (`model.lstm.dim=128`, values read as
JSON), to compare another size at the same scale. The vocabulary is the training text's most frequent
`--vocab-size` tokens; both sample as many negatives. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

import torch

from benchmarks.common import machine, preset_settings, pretraining_flops_per_token
from spacy_elmo.elmo.pretrain import build_vocabulary, count_tokens, train
from spacy_elmo.elmo.pretrain.config import parse_changes
from spacy_elmo.elmo.pretrain.export import load_language_model
from spacy_elmo.elmo.pretrain.perplexity import perplexity

SHAPES: Dict[str, Dict[str, Any]] = {
    "base (the default / 8)": {
        "model.lstm.dim": 64,
        "model.char_cnn.filters": [[1, 4], [2, 4], [3, 8], [4, 16], [5, 32]],
    },
    "larger (small / 8)": {
        "model.lstm.dim": 128,
        "model.char_cnn.filters": [[1, 16], [2, 16], [3, 32], [4, 64], [5, 128]],
    },
}
COMMON = {
    "model.lstm.projection_dim": 16,
    "model.char_cnn.n_highway": 1,
    "training.batch_size": 64,
    "training.shuffle_buffer": 10000,
    "training.n_epochs": 1000,
    "training.max_steps": None,
    "logging.log_every": 10**9,
    "logging.eval_every": 10**9,
    "logging.checkpoint_every": 10**9,
    "logging.plot": False,
}


def weights(options: Any) -> int:
    """The biLM's weights, the softmax left out (what the scaling-law counts divide tokens by)."""
    from spacy_elmo.elmo.nn.bilm import BiLM

    return sum(p.numel() for p in BiLM(options).parameters())


def run_shape(name: str, config: Any, heldout: Path, out: Path) -> Dict[str, Any]:
    started = time.perf_counter()
    result = train(config, out, show_progress=False)
    seconds = time.perf_counter() - started
    model, vocab = load_language_model(out)
    score = perplexity(model.eval(), vocab, heldout, max_tokens=20000)
    n = weights(config.options)
    return {
        "shape": name,
        "weights": n,
        "steps": result.step,
        "tokens": result.tokens,
        "tokens_per_weight": round(result.tokens / n, 1),
        "seconds": round(seconds, 1),
        "heldout_perplexity": round(score.average, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, required=True, help="Whitespace-tokenized training text.")
    parser.add_argument("--heldout", type=Path, required=True, help="Held-out text (its first 20,000 tokens).")
    parser.add_argument("--base-steps", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--vocab-size", type=int, default=10000)
    parser.add_argument("--negatives", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0, help="Both runs' training seed.")
    parser.add_argument("--larger", nargs="+", default=[], metavar="KEY=VALUE", help="changes to the larger shape")
    args = parser.parse_args()
    shapes = dict(SHAPES)
    if args.larger:
        larger = shapes.pop(list(shapes)[1])
        changes = parse_changes(args.larger)
        shapes["larger (small / 8, changed by --larger)"] = {**larger, **changes}
    torch.set_num_threads(args.threads)
    rows: List[Dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        vocab = Path(tmp) / "vocab.txt"
        build_vocabulary(count_tokens([args.train]), max_size=args.vocab_size).to_file(vocab)
        paths = {
            "paths.train": [str(args.train)],
            "paths.vocab": str(vocab),
            "paths.dev": None,
            "training.n_negative_samples": args.negatives,
            "training.seed": args.seed,
        }
        configs = {name: preset_settings("small", {**COMMON, **paths, **shape}) for name, shape in shapes.items()}
        flops = {name: pretraining_flops_per_token(c.options, args.negatives) for name, c in configs.items()}
        base = next(iter(shapes))
        for i, (name, config) in enumerate(configs.items()):
            steps = round(args.base_steps * flops[base] / flops[name])
            config = preset_settings("small", {**COMMON, **paths, **shapes[name], "training.max_steps": steps})
            row = run_shape(name, config, args.heldout, Path(tmp) / f"run{i}")
            rows.append({**row, "gflop": round(flops[name] * row["tokens"] / 1e9, 1), "options": shapes[name]})
    print(json.dumps({"machine": machine(), "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
