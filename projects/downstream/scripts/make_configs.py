"""The training configs of the downstream experiment, one per task and system, all from spaCy's own
default CPU config so that every system shares the head, the optimizer, the batching and the schedule.

    python -m scripts.make_configs configs/

- `baseline`: `spacy init config --pipeline tagger|ner --optimize efficiency` as it is (hash embeddings
  of NORM, PREFIX, SUFFIX, SHAPE into a MaxoutWindowEncoder, width 96, depth 4).
- `elmo_encoder` (the paper's setup, `[x; ELMo]` into the task's own encoder): a frozen biLM in an `elmo`
  component; the head's Tok2Vec embeds each token as its ElmoListener mix beside the same hash
  embeddings, projected to width 96, and encodes with the same MaxoutWindowEncoder.
- `elmo_alone`: the mix without the hash embeddings, projected to width 96, into the same encoder: what
  ELMo's layers give by themselves, for reference.
- `elmo_probe`: the listener (mix + hash embeddings) straight into the head, no encoder: what ELMo's
  layers give a linear classifier.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

from confection import Config

HEADS = {"pos": "tagger", "ner": "ner"}
ELMO_COMPONENT = {
    "factory": "elmo",
    "pooling": "mean",
    "store_layers": True,
    "frozen": True,
    "set_tensor": False,
    "cache_mb": 2048,
    "model": {
        "@architectures": "spacy-elmo.BiLM.v2",
        "options": "${paths.elmo_options}",
        "weights": "${paths.elmo_weights}",
    },
}
MIX = {
    "@layers": "spacy-elmo.ScalarMix.v1",
    "weights": None,
    "gamma": 1.0,
    "layer_norm": False,
    "dropout": 0.1,
    "l2": 0.001,
    "trainable": True,
}
# The mix's own dropout per task, selected on dev (projects/downstream/README.md, "Tuning"): NER at
# 500 sentences, 3 seeds, mean dev F1 45.71 without against 43.70-44.96 with 0.1 in three runs.
MIX_DROPOUT = {"pos": 0.1, "ner": 0.0}


def spacy_default(head: str) -> Config:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.cfg"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "spacy",
                "init",
                "config",
                str(path),
                "--lang",
                "en",
                "--pipeline",
                head,
                "--optimize",
                "efficiency",
                "--force",
            ],
            check=True,
            capture_output=True,
        )
        return Config().from_disk(path, interpolate=False)


def listener(hash_embed: Optional[Dict[str, Any]], width: int, mix_dropout: float) -> Dict[str, Any]:
    return {
        "@architectures": "spacy-elmo.ElmoListener.v1",
        "upstream": "elmo",
        "width": width,
        "mix": dict(MIX, dropout=mix_dropout),
        "extra_features": hash_embed,
    }


def elmo_variant(base: Config, task: str, encoder: bool, hash_features: bool = True) -> Config:
    head = HEADS[task]
    config = Config(base).copy()
    tok2vec = config["components"].pop("tok2vec")["model"]
    width = tok2vec["encode"]["width"]
    hash_embed = dict(tok2vec["embed"], width=width) if hash_features else None
    config["nlp"]["pipeline"] = ["elmo", head]
    config["components"]["elmo"] = dict(ELMO_COMPONENT)
    if encoder:
        config["components"][head]["model"]["tok2vec"] = {
            "@architectures": "spacy.Tok2Vec.v2",
            "embed": listener(hash_embed, width, MIX_DROPOUT[task]),
            "encode": tok2vec["encode"],
        }
    else:
        config["components"][head]["model"]["tok2vec"] = listener(hash_embed, width, MIX_DROPOUT[task])
    config["paths"]["elmo_options"] = None
    config["paths"]["elmo_weights"] = None
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    for task, head in HEADS.items():
        base = spacy_default(head)
        base["training"]["logger"] = {"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False}
        configs = {
            "baseline": base,
            "elmo_encoder": elmo_variant(base, task, encoder=True),
            "elmo_alone": elmo_variant(base, task, encoder=True, hash_features=False),
            "elmo_probe": elmo_variant(base, task, encoder=False),
        }
        for system, config in configs.items():
            config.to_disk(args.output / f"{task}_{system}.cfg", interpolate=False)
            print(f"wrote {args.output / f'{task}_{system}.cfg'}")


if __name__ == "__main__":
    main()
