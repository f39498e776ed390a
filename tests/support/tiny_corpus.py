"""A tiny pretraining corpus the tests write themselves: random sentences over a few words."""

import random
from pathlib import Path
from typing import Dict, List

from spacy_elmo.elmo.pretrain import build_vocabulary, count_tokens

WORDS = "the a bank river money rates raised have banks of in on it is was".split()


def write_tiny_corpus(directory: Path, n_sentences: int = 100) -> Dict[str, object]:
    """`directory`/train/train.txt and `directory`/vocab.txt; returns the `[paths]` overrides that train
    on them (no held-out file: the presets name corpus/dev.txt)."""
    rng = random.Random(0)
    (directory / "train").mkdir(parents=True, exist_ok=True)
    train_file = directory / "train" / "train.txt"
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(n_sentences)]
    train_file.write_text("\n".join(lines) + "\n", encoding="utf8")
    vocab = directory / "vocab.txt"
    build_vocabulary(count_tokens([train_file])).to_file(vocab)
    return {"paths.train": [str(train_file)], "paths.vocab": str(vocab), "paths.dev": None}


def write_lines(path: Path, lines: List[str]) -> Path:
    """`path` holding `lines`, one a line (a dump's or the `elmo` command's input)."""
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path
