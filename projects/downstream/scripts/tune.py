"""Variants of one system's config, trained like the grid's runs and compared on dev only.

    python -m scripts.tune corpus configs runs-tune --task ner --size 500 --system elmo_encoder \
        --variant hidden128 components.ner.model.hidden_width=128 \
        --variant mixdrop01 components.ner.model.tok2vec.embed.mix.dropout=0.1

Each variant is the system's config with `key=value` overrides, values read as JSON where they are
(`0.0`, `true`, `[1, 2]`, a whole block `{"@architectures": ...}`) and as strings otherwise. It is saved
as `<output>/configs/<task>_<variant>.cfg` and trained with the grid's protocol (`run_grid.execute`:
same steps, evaluations, seeds, one thread) under `<output>/runs`. The unchanged system runs as the
variant `base`. Prints the dev score per seed and its mean; the test scores that `execute` also writes
are for the one variant chosen afterwards, and this script never prints them.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Dict, List, Tuple

import srsly
from spacy.util import load_config

from .run_grid import SCHEDULE, SCORES, Run, add_elmo_arguments, elmo_settings, execute


def parse_variant(items: List[str]) -> Tuple[str, Dict[str, object]]:
    name, *pairs = items
    overrides: Dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"variant {name}: expected key=value, got {pair!r}")
        try:
            overrides[key] = srsly.json_loads(value)
        except ValueError:  # a bare string
            overrides[key] = value
    return name, overrides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("configs", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--task", choices=sorted(SCORES), required=True)
    parser.add_argument("--size", default="500", choices=sorted(SCHEDULE))
    parser.add_argument("--system", default="elmo_encoder")
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=None, help="default: the grid's for --size")
    parser.add_argument("--eval-every", type=int, default=None, help="default: the grid's for --size")
    parser.add_argument("--variant", nargs="+", action="append", default=[], metavar="NAME KEY=VALUE")
    add_elmo_arguments(parser)
    args = parser.parse_args()
    steps, eval_every = SCHEDULE[args.size]
    steps, eval_every = args.steps or steps, args.eval_every or eval_every
    variant_configs = args.output / "configs"
    variant_configs.mkdir(parents=True, exist_ok=True)
    base = args.configs / f"{args.task}_{args.system}.cfg"
    variants = [("base", {})] + [parse_variant(items) for items in args.variant]
    metric = SCORES[args.task][0]
    elmo = elmo_settings(parser, args)
    for name, overrides in variants:
        config = load_config(base, overrides=overrides, interpolate=False)
        config.to_disk(variant_configs / f"{args.task}_{name}.cfg")
        scores = []
        for seed in args.seeds:
            run = Run(args.task, args.size, name, seed, steps, eval_every)
            record = execute(run, args.corpus, variant_configs, args.output / "runs", elmo)
            if "error" in record:
                print(f"{name} seed {seed}: {record['error']}", flush=True)
                continue
            scores.append(100 * record["dev"][metric])
        if scores:
            spread = f" ({min(scores):.2f}-{max(scores):.2f})" if len(scores) > 1 else ""
            line = " ".join(f"{s:.2f}" for s in scores)
            print(f"{name}: dev {metric} {statistics.mean(scores):.2f}{spread} [{line}] {overrides}", flush=True)


if __name__ == "__main__":
    main()
