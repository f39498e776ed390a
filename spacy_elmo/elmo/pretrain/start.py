"""How a run starts: its optimizer, and the weights it may start from (a pretraining output, whose
softmax rows are kept for the words both vocabularies share, or a published weights file)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, List

import torch

from ..formats import load_weights
from ..nn.options import ElmoOptions
from .config import ConfigError, TrainingSettings
from .export import OPTIONS_FILE, SOFTMAX_FILE, VOCAB_FILE, WEIGHTS_FILE, load_softmax
from .model import LanguageModel
from .vocab import Vocabulary

logger = logging.getLogger(__name__)


def build_optimizer(settings: TrainingSettings, params: Any) -> torch.optim.Optimizer:
    if settings.optimizer == "adagrad":
        return torch.optim.Adagrad(
            params, lr=settings.learning_rate, initial_accumulator_value=settings.initial_accumulator
        )
    if settings.optimizer == "adam":
        return torch.optim.Adam(params, lr=settings.learning_rate)
    return torch.optim.SGD(params, lr=settings.learning_rate)


def architecture_differences(a: ElmoOptions, b: ElmoOptions) -> List[str]:
    """Architecture keys on which two options disagree (261 and 262 characters are the same model)."""

    def flat(options: ElmoOptions) -> Dict[str, Any]:
        data = options.to_dict()
        data["char_cnn"]["n_characters"] = None
        return {f"{s}.{k}": v for s in ("lstm", "char_cnn") for k, v in data[s].items()}

    fa, fb = flat(a), flat(b)
    return [
        f"{k} ({fa.get(k)!r} there, {fb.get(k)!r} here)" for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)
    ]


def initialize_from(model: LanguageModel, vocab: Vocabulary, source: Path) -> None:
    """Start from existing weights: a pretraining output directory (biLM and, for the words both
    vocabularies share, the softmax) or a published weights .hdf5 (biLM only)."""
    if source.is_dir():
        options_path = source / OPTIONS_FILE
        if not options_path.is_file():
            raise ConfigError(f"[paths] init: {source} has no {OPTIONS_FILE}")
        differences = architecture_differences(ElmoOptions.from_file(options_path), model.options)
        if differences:
            raise ConfigError(
                f"[paths] init: the model in {source} differs from [model] in "
                f"{'; '.join(differences)}; make [model] match it"
            )
        load_weights(model.bilm, source / WEIGHTS_FILE)
        if (source / SOFTMAX_FILE).is_file() and (source / VOCAB_FILE).is_file():
            copied = load_softmax(model, source / SOFTMAX_FILE, vocab, Vocabulary.from_file(source / VOCAB_FILE))
            logger.info("softmax: %d of %d words taken from %s", copied, len(vocab), source)
    elif source.is_file():
        load_weights(model.bilm, source)
    else:
        raise ConfigError(
            f"[paths] init: {source} does not exist; give a pretraining output directory or a weights .hdf5 file"
        )
