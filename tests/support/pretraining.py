"""The tiny pretraining run the tests share: configs/pretrain_tiny.cfg on bilm-tf's tiny corpus, held
out on the same text."""

from typing import Any

from spacy_elmo.pretrain import PretrainConfig, load_config

from .paths import PRETRAIN_TINY_CONFIG, TRAIN_TEXT, TRAIN_VOCAB

TINY_RUN_PATHS = {
    "paths.train": str(TRAIN_TEXT),
    "paths.vocab": str(TRAIN_VOCAB),
    "paths.dev": str(TRAIN_TEXT),
    "logging.plot": False,
}


def tiny_pretrain_config(**overrides: Any) -> PretrainConfig:
    """The tiny run's config with `overrides` by dotted key; `__` stands for a dot in keyword names
    (`training__max_steps=4`)."""
    return load_config(
        PRETRAIN_TINY_CONFIG, {**TINY_RUN_PATHS, **{k.replace("__", "."): v for k, v in overrides.items()}}
    )


# bilm-tf's tiny corpus as token lists, one per non-empty line.
TRAIN_SENTENCES = [line.split() for line in TRAIN_TEXT.read_text(encoding="utf8").splitlines() if line.strip()]
