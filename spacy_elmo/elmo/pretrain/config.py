"""The pretraining config: a thinc/spaCy-style .cfg with command-line overrides, checked up front.

`[model]` is the options.json of the model to train, section for section, so what is trained is what
gets exported. Everything is validated before any file is written: an unknown key, a wrong type or sizes
that cannot work together fail with the key's name, not after an hour of training.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Sequence, Union

from confection import Config, ConfigValidationError
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..nn.options import ElmoOptions, OptionsError
from ..util.validation import must_be, validate
from .errors import ConfigError

# Each setting is declared once, with its type, default, limits and meaning: the checks, the error
# messages and the generated configs (presets.py) all come from these declarations. Strict: a value is
# never coerced (no "64" for 64, no true for 1); numbers must be finite.
_SETTINGS = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, validate_default=True)
SPARSE_OPTIMIZERS = ("adagrad", "sgd")
# Each step's inputs are allocated whole (rows x unroll steps x characters): limits far above any real
# run (the original: 128 x 20) that refuse a typo before it asks for terabytes.
MAX_BATCH_ROWS = 1 << 16
MAX_UNROLL_STEPS = 1 << 12
MAX_STEP_TOKENS = 1 << 20


class TrainingSettings(BaseModel):
    model_config = _SETTINGS

    seed: int = Field(0, ge=0)
    n_epochs: int = Field(10, ge=1)
    max_steps: Optional[int] = Field(None, ge=1, description="Stop earlier than n_epochs (null: never).")
    max_time: Optional[float] = Field(
        None,
        gt=0,
        description="Minutes of wall-clock time after which the run stops, with a checkpoint and the export "
        "(null: never); counted from the start of each run or resume.",
    )
    batch_size: int = Field(
        128,
        ge=1,
        le=MAX_BATCH_ROWS,
        description="Rows per process; the original used 128 per GPU (docs/pretraining.md).",
    )
    unroll_steps: int = Field(20, ge=1, le=MAX_UNROLL_STEPS)
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
    step_mode: Literal["auto", "plain", "no_sync", "compiled"] = Field(
        "auto",
        description='"auto": compiled on one CUDA GPU, no_sync under torchrun, plain elsewhere (docs/gpu.md); '
        'or "plain", "no_sync" (no host read in a step), "compiled" (torch.compile).',
    )

    @property
    def updates_on_device(self) -> bool:
        """Whether the no_sync and compiled steps apply: their update is Adagrad's or SGD's on dense
        gradients, written with foreach operations (elmo/pretrain/step_modes.py)."""
        return not self.sparse_softmax and self.optimizer in SPARSE_OPTIMIZERS

    @model_validator(mode="after")
    def _step_fits_memory(self) -> "TrainingSettings":
        if self.batch_size * self.unroll_steps > MAX_STEP_TOKENS:
            raise ConfigError(
                f"batch_size x unroll_steps ({self.batch_size} x {self.unroll_steps}) tokens per step is above "
                f"the limit of {MAX_STEP_TOKENS:,}; lower one of them (the original trains 128 x 20)"
            )
        return self

    @model_validator(mode="after")
    def _sparse_softmax_fits(self) -> "TrainingSettings":
        if self.sparse_softmax and self.softmax != "sampled":
            raise ConfigError(
                'sparse_softmax = true needs softmax = "sampled": the full softmax touches every row at every step'
            )
        if self.sparse_softmax and self.optimizer not in SPARSE_OPTIMIZERS:
            raise ConfigError(
                f"sparse_softmax = true works with {' or '.join(SPARSE_OPTIMIZERS)} (torch's "
                f"{self.optimizer} takes no sparse gradients); change the optimizer or set it to false"
            )
        if self.step_mode not in ("auto", "plain") and not self.updates_on_device:
            raise ConfigError(
                f'step_mode = "{self.step_mode}" updates the weights on the device with adagrad or sgd and dense '
                'gradients; set optimizer = "adagrad" and sparse_softmax = false, or step_mode = "plain"'
            )
        return self


class LoggingSettings(BaseModel):
    model_config = _SETTINGS

    log_every: int = Field(50, ge=1, description="Steps between log records.")
    eval_every: int = Field(2000, ge=1, description="Steps between held-out evaluations (when [paths] dev is set).")
    eval_max_tokens: int = Field(100_000, ge=1, description="Held-out tokens per evaluation during training.")
    eval_batch_size: int = Field(64, ge=1, le=MAX_BATCH_ROWS)
    checkpoint_every: int = Field(1250, ge=1, description="Steps between checkpoints (and model exports).")
    plot: bool = Field(True, description="Draw perplexity.png (needs matplotlib).")


# Keys a resumed run may change: they do not alter what has been computed so far (the stream of epoch e
# does not depend on the number of epochs).
RESUMABLE_CHANGES = {
    "training.n_epochs",
    "training.max_steps",
    "training.max_time",
    "paths.dev",
    "training.tf32",
    "training.bf16",
    "training.prefetch",
    "training.step_mode",
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


class PathsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    train: List[str] = must_be("the training text: a file, a directory, a glob or a list of them", min_length=1)
    vocab: Path = must_be("a vocabulary file (build it with `python -m spacy_elmo vocab`)")
    dev: Optional[Path] = None
    init: Optional[Path] = None

    @field_validator("train", mode="before")
    @classmethod
    def _one_or_more(cls, value: Any) -> Any:
        if isinstance(value, (str, Path)):
            value = [value] if str(value) else []
        return [str(v) if isinstance(v, Path) else v for v in value] if isinstance(value, list) else value

    @field_validator("vocab", "dev", "init", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value


class _Sections(BaseModel):
    """The config's sections; `[model]` is options.json's layout, checked by ElmoOptions. A missing
    `[training]` or `[logging]` is all defaults."""

    model_config = ConfigDict(extra="forbid")

    paths: PathsSettings
    model: Dict[str, Any]
    training: TrainingSettings = TrainingSettings.model_validate({})
    logging: LoggingSettings = LoggingSettings.model_validate({})


def parse_config(config: Config) -> PretrainConfig:
    """Validate an interpolated Config and turn it into typed settings."""
    sections = validate(_Sections, _plain(dict(config)), ConfigError, config=True)
    options = _options(sections.model)
    return PretrainConfig(
        train=sections.paths.train,
        dev=sections.paths.dev,
        vocab=sections.paths.vocab,
        init=sections.paths.init,
        options=options,
        training=sections.training,
        logging=sections.logging,
        config=config,
    )


def _options(model: Dict[str, Any]) -> ElmoOptions:
    try:
        return ElmoOptions.from_dict(model)
    except OptionsError as err:
        raise ConfigError(f"[model]: {err}") from None


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
                    f"config file {path} does not exist; write a preset's with "
                    "`python -m spacy_elmo init-config small FILE` (tiny, small, medium, original)"
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


def parse_changes(changes: Sequence[str]) -> Dict[str, Any]:
    """`section.key=value` changes (the benchmarks' `--set`, projects/bundled_model's `scripts.window begin
    --set`), read as `parse_overrides` reads `--section.key=value`."""
    return parse_overrides([f"--{change}" for change in changes])


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
