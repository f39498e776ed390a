"""Per-head mixes against one shared ELMo-fed tok2vec, on the README's tagger + NER task.

    make corpora      # projects/downstream/corpus/pos_ner/{train-all,dev,test}.spacy
    python -m benchmarks.bench_shared
    python -m benchmarks.bench_shared --max-steps 200 --seeds 0 1 2 --model NAME|PATH

Both configs are `spacy init fill-elmo` of `spacy init config --pipeline tagger,ner` (`--per-head`, the
default, and `--shared`), trained by `spacy train` with the same seed; each row gives the test scores
of `model-best`, the training's wall time and `spacy evaluate`'s words a second. Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Optional

from benchmarks.common import machine

CORPUS = Path(__file__).resolve().parents[1] / "projects" / "downstream" / "corpus" / "pos_ner"
LAYOUTS = {"per-head": False, "shared": True}


def write_config(path: Path, shared: bool, model: Optional[str]) -> None:
    from spacy.cli.init_config import init_config

    from spacy_elmo.pipeline.fill_config import fill_elmo_config

    base = init_config(lang="en", pipeline=["tagger", "ner"], optimize="efficiency", gpu=False, silent=True)
    fill_elmo_config(base, model=model, shared=shared).to_disk(path, interpolate=False)


def spacy(*args: object) -> None:
    subprocess.run([sys.executable, "-m", "spacy", *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def run(layout: str, seed: int, args: argparse.Namespace, directory: Path) -> Dict[str, float]:
    config, out, scores = directory / f"{layout}.cfg", directory / f"{layout}-{seed}", directory / "scores.json"
    write_config(config, LAYOUTS[layout], args.model)
    steps = [] if args.max_steps is None else ["--training.max_steps", args.max_steps]
    start = time.perf_counter()
    spacy(
        "train",
        config,
        "--output",
        out,
        "--paths.train",
        args.train,
        "--paths.dev",
        args.dev,
        "--system.seed",
        seed,
        *steps,
    )
    seconds = time.perf_counter() - start
    spacy("evaluate", out / "model-best", args.test, "--output", scores)
    result = json.loads(scores.read_text(encoding="utf8"))
    return {
        "tag_acc": 100 * result["tag_acc"],
        "ents_f": 100 * result["ents_f"],
        "train_s": seconds,
        "words_s": result["speed"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=Path, default=CORPUS / "train-all.spacy")
    parser.add_argument("--dev", type=Path, default=CORPUS / "dev.spacy")
    parser.add_argument("--test", type=Path, default=CORPUS / "test.spacy")
    parser.add_argument("--model", default=None, help="A model's name or path; default: the bundled default.")
    parser.add_argument("--max-steps", type=int, default=None, help="Default: the config's (spaCy's).")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    print(machine(), flush=True)
    print("| layout | seed | tags | entity F1 | training s | words/s |\n|---|---|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:  # the layouts alternate, so a drift of the machine reaches both
            for layout in LAYOUTS:
                row = run(layout, seed, args, Path(tmp))
                print(
                    f"| {layout} | {seed} | {row['tag_acc']:.2f} | {row['ents_f']:.2f} | {row['train_s']:.0f} | "
                    f"{row['words_s']:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
