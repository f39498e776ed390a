"""The tiny pretraining run the tests share: the `tiny` preset on bilm-tf's tiny corpus, held
out on the same text."""

import shutil
from pathlib import Path
from typing import Any, List

import h5py

from spacy_elmo.elmo.pretrain import PretrainConfig, load_config

from .paths import PRETRAIN_TINY_CONFIG, TRAIN_TEXT, TRAIN_VOCAB

TINY_RUN_PATHS = {
    "paths.train": str(TRAIN_TEXT),
    "paths.vocab": str(TRAIN_VOCAB),
    "paths.dev": str(TRAIN_TEXT),
    "logging.plot": False,
}


def pretrain_arguments(out: Path, **overrides: Any) -> List[str]:
    """`spacy_elmo pretrain`'s command-line arguments (what follows `python -m`) for the tiny run into `out`,
    with `overrides` by dotted key (None: null; booleans as the config writes them)."""
    arguments = ["spacy_elmo", "pretrain", str(PRETRAIN_TINY_CONFIG), "--output", str(out), "--no-progress"]
    for key, value in {**TINY_RUN_PATHS, **overrides}.items():
        text = "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        arguments += [f"--{key}", text]
    return arguments


def tiny_pretrain_config(**overrides: Any) -> PretrainConfig:
    """The tiny run's config with `overrides` by dotted key; `__` stands for a dot in keyword names
    (`training__max_steps=4`)."""
    return load_config(
        PRETRAIN_TINY_CONFIG, {**TINY_RUN_PATHS, **{k.replace("__", "."): v for k, v in overrides.items()}}
    )


# bilm-tf's tiny corpus as token lists, one per non-empty line.
TRAIN_SENTENCES = [line.split() for line in TRAIN_TEXT.read_text(encoding="utf8").splitlines() if line.strip()]


def with_softmax_bomb(run: Path, folder: Path) -> Path:
    """A copy of the run directory `run` in `folder` whose few-KB softmax.hdf5 declares 2e9 x 16 floats
    (119 GiB to allocate were it read), stamped with the weights' step so that it passes as their export."""
    copy = Path(shutil.copytree(run, folder / "bomb-run"))
    with h5py.File(copy / "softmax.hdf5", "r") as f:
        step = f.attrs["training_step"]
    with h5py.File(copy / "softmax.hdf5", "w") as f:
        f.create_dataset("softmax/W", shape=(2_000_000_000, 16), dtype="float32")
        f.create_dataset("softmax/b", shape=(2_000_000_000,), dtype="float32")
        f.attrs["training_step"] = step
    return copy


def untrained_export(folder: Path) -> Path:
    """An `evaluate` model folder in a moment: the tiny preset's language model, untrained (seeded), with
    bilm-tf's tiny vocabulary, exported into `folder`."""
    import torch

    from spacy_elmo.elmo.nn.options import preset
    from spacy_elmo.elmo.pretrain import LanguageModel, export_model
    from spacy_elmo.elmo.pretrain.vocab import Vocabulary

    vocab = Vocabulary.from_file(TRAIN_VOCAB)
    torch.manual_seed(0)
    export_model(LanguageModel(preset("tiny"), len(vocab)), vocab, folder, step=1)
    return folder
