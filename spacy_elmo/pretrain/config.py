"""The pretraining config: a thinc/spaCy-style .cfg with command-line overrides, checked up front.

`[model]` is the options.json of the model to train, section for section, so what is trained is what
gets exported. Everything is validated before any file is written: an unknown key, a wrong type or sizes
that cannot work together fail with the key's name, not after an hour of training.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from confection import Config, ConfigValidationError

from ..errors import ElmoError
from ..options import ElmoOptions, OptionsError


class ConfigError(ElmoError):
    """A pretraining config that cannot be used; the message names the section and key."""


@dataclass
class TrainingSettings:
    seed: int = 0
    n_epochs: int = 10
    max_steps: Optional[int] = None
    batch_size: int = 128
    unroll_steps: int = 20
    dropout: float = 0.1
    softmax: str = "sampled"
    n_negative_samples: int = 8192
    optimizer: str = "adagrad"
    learning_rate: float = 0.2
    initial_accumulator: float = 1.0
    clip_norm: float = 10.0
    shuffle_buffer: int = 100_000
    # GPU speed options, off by default (docs/pretraining.md): TF32 matrix products, bf16 autocast, and
    # the number of steps whose inputs a background thread builds ahead (0: none).
    # Sampled softmax with Adagrad or SGD: update only the softmax rows of the step's targets and
    # negatives, as the original (a dense [V, P] gradient per step is 1.6 GB at the original vocabulary).
    sparse_softmax: bool = False
    tf32: bool = False
    bf16: bool = False
    prefetch: int = 0


@dataclass
class LoggingSettings:
    log_every: int = 50
    eval_every: int = 1000
    eval_max_tokens: int = 50_000
    eval_batch_size: int = 64
    checkpoint_every: int = 500
    plot: bool = True


SOFTMAX_KINDS = ("sampled", "full")
OPTIMIZERS = ("adagrad", "adam", "sgd")
SPARSE_OPTIMIZERS = ("adagrad", "sgd")
# Keys a resumed run may change: they do not alter what has been computed so far (the stream of epoch e
# does not depend on the number of epochs).
RESUMABLE_CHANGES = {
    "training.n_epochs",
    "training.max_steps",
    "paths.dev",
    "training.tf32",
    "training.bf16",
    "training.prefetch",
} | {f"logging.{f.name}" for f in fields(LoggingSettings)}


@dataclass
class PretrainConfig:
    train: List[str]
    dev: Optional[Path]
    vocab: Path
    init: Optional[Path]
    options: ElmoOptions
    training: TrainingSettings
    logging: LoggingSettings
    config: Config


_POSITIVE_INTS = {
    "n_epochs",
    "batch_size",
    "unroll_steps",
    "n_negative_samples",
    "shuffle_buffer",
    "log_every",
    "eval_every",
    "eval_max_tokens",
    "eval_batch_size",
    "checkpoint_every",
}


def _check_value(section: str, name: str, value: Any, default: Any) -> Any:
    where = f"[{section}] {name}"
    if name == "max_steps":
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError(f"{where} must be a positive integer or null, got {value!r}")
        return value
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be an integer, got {value!r}")
        if name in _POSITIVE_INTS and value < 1:
            raise ConfigError(f"{where} must be at least 1, got {value}")
        if value < 0:
            raise ConfigError(f"{where} must not be negative, got {value}")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where} must be a number, got {value!r}")
        if name == "dropout" and not 0 <= value < 1:
            raise ConfigError(f"{where} must be in [0, 1), got {value}")
        if name != "dropout" and value <= 0:
            raise ConfigError(f"{where} must be positive, got {value}")
        return float(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {value!r}")
    return value


def _settings(cls: type, section: str, raw: Dict[str, Any]) -> Any:
    allowed = {f.name: f.default for f in fields(cls)}
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(unknown)} in [{section}]; allowed: {', '.join(allowed)}")
    return cls(**{k: _check_value(section, k, v, allowed[k]) for k, v in raw.items()})


def _optional_path(value: Any, where: str) -> Optional[Path]:
    if value is None or value == "":
        return None
    if not isinstance(value, (str, Path)):
        raise ConfigError(f"{where} must be a path or null, got {value!r}")
    return Path(value)


def parse_config(config: Config) -> PretrainConfig:
    """Validate an interpolated Config and turn it into typed settings."""
    unknown = sorted(set(config) - {"paths", "model", "training", "logging"})
    if unknown:
        raise ConfigError(f"unknown section(s) {', '.join(unknown)}; allowed: paths, model, training, logging")
    for name in ("paths", "model"):
        if name not in config:
            raise ConfigError(f"the config has no [{name}] section")
    paths = dict(config["paths"])
    unknown = sorted(set(paths) - {"train", "dev", "vocab", "init"})
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(unknown)} in [paths]; allowed: train, dev, vocab, init")
    train = paths.get("train")
    if isinstance(train, (str, Path)) and str(train):
        train = [str(train)]
    if not isinstance(train, list) or not train or not all(isinstance(t, (str, Path)) for t in train):
        raise ConfigError(
            f"[paths] train must name the training text: a file, a directory, a glob or a list of them, got {train!r}"
        )
    vocab = _optional_path(paths.get("vocab"), "[paths] vocab")
    if vocab is None:
        raise ConfigError("[paths] vocab must name a vocabulary file (build it with `python -m spacy_elmo vocab`)")
    try:
        options = ElmoOptions.from_dict(_plain(config["model"]))
    except OptionsError as err:
        raise ConfigError(f"[model]: {err}") from None
    training = _settings(TrainingSettings, "training", dict(config.get("training", {})))
    logging = _settings(LoggingSettings, "logging", dict(config.get("logging", {})))
    if training.softmax not in SOFTMAX_KINDS:
        raise ConfigError(f"[training] softmax must be one of {', '.join(SOFTMAX_KINDS)}, got {training.softmax!r}")
    if training.optimizer not in OPTIMIZERS:
        raise ConfigError(f"[training] optimizer must be one of {', '.join(OPTIMIZERS)}, got {training.optimizer!r}")
    if training.sparse_softmax and training.softmax != "sampled":
        raise ConfigError(
            '[training] sparse_softmax = true needs softmax = "sampled": the full softmax touches '
            "every row at every step"
        )
    if training.sparse_softmax and training.optimizer not in SPARSE_OPTIMIZERS:
        raise ConfigError(
            f"[training] sparse_softmax = true works with {' or '.join(SPARSE_OPTIMIZERS)} (torch's "
            f"{training.optimizer} takes no sparse gradients); change the optimizer or set it to false"
        )
    return PretrainConfig(
        train=[str(t) for t in train],
        dev=_optional_path(paths.get("dev"), "[paths] dev"),
        vocab=vocab,
        init=_optional_path(paths.get("init"), "[paths] init"),
        options=options,
        training=training,
        logging=logging,
        config=config,
    )


def _plain(value: Any) -> Any:
    """Config sections as plain dicts and lists, as options.json would hold them."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def load_config(
    source: Union[str, Path], overrides: Optional[Dict[str, Any]] = None, from_string: bool = False
) -> PretrainConfig:
    """Read a .cfg file (or its text with `from_string`) with `overrides` {"section.key": value}."""
    overrides = overrides or {}
    try:
        if from_string:
            config = Config().from_str(str(source), overrides=overrides)
        else:
            path = Path(source)
            if not path.is_file():
                raise ConfigError(
                    f"config file {path} does not exist; the presets are in configs/ "
                    "(pretrain_small.cfg, pretrain_medium.cfg, pretrain_original.cfg)"
                )
            config = Config().from_disk(path, overrides=overrides)
    except ConfigValidationError as err:
        raise ConfigError(f"invalid config: {err}") from None
    return parse_config(config.interpolate())


def parse_overrides(args: Sequence[str]) -> Dict[str, Any]:
    """`--section.key value` or `--section.key=value` pairs, values read as JSON when they parse, like
    `spacy train`'s overrides."""
    result: Dict[str, Any] = {}
    args = list(args)
    while args:
        arg = args.pop(0)
        if not arg.startswith("--") or "." not in arg:
            raise ConfigError(f"unexpected argument {arg!r}; config overrides look like --training.batch_size 64")
        key, has_value, value = arg[2:].partition("=")
        if not has_value:
            if not args or args[0].startswith("--"):
                raise ConfigError(f"override {arg} needs a value, e.g. {arg} 64")
            value = args.pop(0)
        try:
            result[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            result[key.replace("-", "_")] = value
    return result


def config_differences(old: Config, new: Config) -> List[str]:
    """Dotted keys whose values differ between two configs (sections flattened)."""

    def flatten(value: Any, prefix: str = "") -> Dict[str, Any]:
        if isinstance(value, dict):
            out: Dict[str, Any] = {}
            for k, v in value.items():
                out.update(flatten(v, f"{prefix}{k}."))
            return out
        return {prefix[:-1]: value}

    a, b = flatten(_plain(dict(old))), flatten(_plain(dict(new)))
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
