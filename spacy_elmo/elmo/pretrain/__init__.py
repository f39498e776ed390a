"""Pretraining your own biLM: vocabulary, streamed corpus, training loop, perplexity, export."""

from .config import ConfigError, PretrainConfig, load_config, parse_overrides
from .corpus import CorpusError
from .export import export_model, load_language_model
from .model import LanguageModel
from .perplexity import Perplexity, perplexity, unigram_perplexity
from .trainer import TrainingError, TrainResult, train
from .vocab import Vocabulary, build_vocabulary, count_tokens

__all__ = [
    "ConfigError",
    "CorpusError",
    "LanguageModel",
    "Perplexity",
    "PretrainConfig",
    "TrainResult",
    "TrainingError",
    "Vocabulary",
    "build_vocabulary",
    "count_tokens",
    "export_model",
    "load_config",
    "load_language_model",
    "parse_overrides",
    "perplexity",
    "train",
    "unigram_perplexity",
]
