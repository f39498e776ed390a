"""The pretraining config: a thinc/spaCy-style .cfg with command-line overrides, checked up front.

`[model]` is the options.json of the model to train, section for section, so what is trained is what
gets exported. Everything is validated before any file is written: an unknown key, a wrong type or sizes
that cannot work together fail with the key's name, not after an hour of training.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Sequence, Type, TypeVar, Union

from confection import Config, ConfigValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ElmoError
from ..options import ElmoOptions, OptionsError


class ConfigError(ElmoError):
    """A pretraining config that cannot be used; the message names the section and key."""


# Each setting is declared once, with its type, default, limits and meaning: the checks, the error
# messages and the generated configs (presets.py) all come from these declarations. Strict: a value is
# never coerced (no "64" for 64, no true for 1); numbers must be finite.
_SETTINGS = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, validate_default=True)


class TrainingSettings(BaseModel):
    model_config = _SETTINGS

    seed: int = Field(0, ge=0)
    n_epochs: int = Field(10, ge=1)
    max_steps: Optional[int] = Field(None, ge=1, description="Stop earlier than n_epochs (null: never).")
    batch_size: int = Field(
        128, ge=1, description="Rows per process; the original used 128 per GPU (docs/pretraining.md)."
    )
    unroll_steps: int = Field(20, ge=1)
    dropout: float = Field(0.1, ge=0, lt=1)
    softmax: Literal["sampled", "full"] = Field(
        "sampled",
        description='"sampled" (log-uniform negatives over the frequency-sorted vocabulary) or "full".',
    )
    n_negative_samples: int = Field(8192, ge=1)
    sparse_softmax: bool = Field(
        False,
        description="Sampled softmax: update only the rows of each step's targets and negatives "
        "(Adagrad or SGD), as the original.",
    )
    optimizer: Literal["adagrad", "adam", "sgd"] = Field(
        "adagrad", description='"adagrad" (the original\'s), "adam" or "sgd".'
    )
    learning_rate: float = Field(0.2, gt=0, le=100)
    initial_accumulator: float = Field(1.0, gt=0, le=1e6)
    clip_norm: float = Field(10.0, gt=0, le=1e6, description="Global gradient-norm clipping.")
    shuffle_buffer: int = Field(100_000, ge=1, description="Sentences shuffled together in memory.")
    tf32: bool = Field(False, description="TF32 matrix products on a GPU (docs/gpu.md).")
    bf16: bool = Field(False, description="bf16 autocast on a GPU (docs/gpu.md).")
    prefetch: int = Field(0, ge=0, le=64, description="Steps whose inputs a background thread builds ahead.")


class LoggingSettings(BaseModel):
    model_config = _SETTINGS

    log_every: int = Field(50, ge=1, description="Steps between log records.")
    eval_every: int = Field(2000, ge=1, description="Steps between held-out evaluations (when [paths] dev is set).")
    eval_max_tokens: int = Field(100_000, ge=1, description="Held-out tokens per evaluation during training.")
    eval_batch_size: int = Field(64, ge=1)
    checkpoint_every: int = Field(1250, ge=1, description="Steps between checkpoints (and model exports).")
    plot: bool = Field(True, description="Draw perplexity.png (needs matplotlib).")


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
} | {f"logging.{name}" for name in LoggingSettings.model_fields}


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


Settings = TypeVar("Settings", bound=BaseModel)


def _settings(cls: Type[Settings], section: str, raw: Dict[str, Any]) -> Settings:
    """The section as `cls`, or a ConfigError naming each bad key, what it must be and what it got."""
    try:
        return cls.model_validate(raw)
    except ValidationError as err:
        problems = []
        for error in err.errors():
            key = ".".join(str(part) for part in error["loc"] if not isinstance(part, int)) or "?"
            if error["type"] == "extra_forbidden":
                problems.append(f"unknown key {key}; allowed: {', '.join(cls.model_fields)}")
            else:
                problems.append(f"{key} = {error['input']!r}: {error['msg'].lower()}")
        raise ConfigError(f"[{section}] " + f"; [{section}] ".join(problems)) from None


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
