"""The training configs of the downstream experiment, one per task and system, all from spaCy's own
default CPU config so that every system shares the head, the optimizer, the batching and the schedule.

    python -m scripts.make_configs configs/

- `baseline`: `spacy init config --pipeline tagger|ner --optimize efficiency` as it is (hash embeddings
  of NORM, PREFIX, SUFFIX, SHAPE into a MaxoutWindowEncoder, width 96, depth 4).
- `elmo_encoder` (the paper's setup, `[x; ELMo]` into the task's own encoder): `spacy init fill-elmo`'s
  config: a frozen biLM in an `elmo` component; the head's Tok2Vec embeds each token as its ElmoListener
  mix beside the same hash embeddings, projected to width 96, and encodes with the same
  MaxoutWindowEncoder.
- `elmo_alone`: the mix without the hash embeddings, projected to width 96, into the same encoder: what
  ELMo's layers give by themselves, for reference.
- `elmo_probe`: the listener (mix + hash embeddings) straight into the head, no encoder: what ELMo's
  layers give a linear classifier.

Further heads, `baseline` and `elmo_encoder` only (alone and probe answer the tagger's and NER's
question): `spans` (spancat) and `dep` (parser) as above. `genre` (textcat): spaCy's efficiency default
is `spacy.TextCatBOW.v3`, a bag of words with no tok2vec, which fill-elmo leaves as it is; so the genre
task adds `ensemble`, spaCy's accuracy default head (`spacy.TextCatEnsemble.v2`: the same bag of words
beside a tok2vec) on the efficiency tok2vec the other tasks share, and its `elmo_encoder` is fill-elmo's
of `ensemble`: against `baseline` the row says what the tok2vec head with ELMo gives over spaCy's
default, against `ensemble` what ELMo adds to the same head. The accuracy default's own tok2vec (width
256, depth 8, static vectors) is not taken: the grid has no vectors, and one encoder for every task
keeps the rows comparable.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from confection import Config

from spacy_elmo.pipeline.fill_config import fill_elmo_config

HEADS = {"pos": "tagger", "ner": "ner", "genre": "textcat", "spans": "spancat", "dep": "parser"}
# The tasks whose configs include ELMo alone and the linear probe.
REFERENCE_TASKS = ("pos", "ner")
# A larger cache than the component's default: the grid's largest training set fits whole.
CACHE_MB = 2048


def spacy_default(head: str, optimize: str = "efficiency") -> Config:
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
                optimize,
                "--force",
            ],
            check=True,
            capture_output=True,
        )
        return Config().from_disk(path, interpolate=False)


def textcat_ensemble(base: Config) -> Config:
    """`base` (the efficiency textcat config) with spaCy's accuracy default textcat head, its tok2vec
    component the efficiency one of the other tasks (`spacy.Tok2Vec.v2`, width 96, depth 4)."""
    accuracy = spacy_default("textcat", optimize="accuracy")
    config = base.copy()
    config["nlp"]["pipeline"] = accuracy["nlp"]["pipeline"]
    config["components"] = {
        "tok2vec": spacy_default("tagger")["components"]["tok2vec"],
        "textcat": accuracy["components"]["textcat"],
    }
    return config


def elmo_encoder(base: Config, task: str) -> Config:
    """What `spacy init fill-elmo` makes of spaCy's config (the user's path, pipeline/fill_config.py): the
    biLM read from `paths.elmo_model` (by default the bundled default)."""
    config = fill_elmo_config(base, frozen=True, tok2vec="instead")
    config["components"]["elmo"]["cache_mb"] = CACHE_MB
    return config


def elmo_alone(encoder: Config, task: str) -> Config:
    """The encoder variant without the hash embeddings beside the mix."""
    config = encoder.copy()
    config["components"][HEADS[task]]["model"]["tok2vec"]["embed"]["extra_features"] = None
    return config


def elmo_probe(encoder: Config, task: str) -> Config:
    """The encoder variant's listener (mix + hash embeddings, projected) straight into the head."""
    config = encoder.copy()
    model = config["components"][HEADS[task]]["model"]
    model["tok2vec"] = model["tok2vec"]["embed"]
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    for task, head in HEADS.items():
        base = spacy_default(head)
        base["training"]["logger"] = {"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False}
        configs = {"baseline": base}
        if task == "genre":
            configs["ensemble"] = textcat_ensemble(base)
        configs["elmo_encoder"] = encoder = elmo_encoder(configs.get("ensemble", base), task)
        if task in REFERENCE_TASKS:
            configs.update(elmo_alone=elmo_alone(encoder, task), elmo_probe=elmo_probe(encoder, task))
        for system, config in configs.items():
            config.to_disk(args.output / f"{task}_{system}.cfg", interpolate=False)
            print(f"wrote {args.output / f'{task}_{system}.cfg'}")


if __name__ == "__main__":
    main()
