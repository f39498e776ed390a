"""ELMo's `options.json`: read, validate, write, and the published sizes as presets.

The file is the contract between the published weights and the model that loads them, so every key is
checked here, once, by the pydantic dataclasses below (errors through validation.py, naming the key): a
typo or a wrong size found later would surface as a shape error deep inside torch.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Literal, Mapping, Optional, Tuple, Union

from pydantic import AliasPath, ConfigDict, Field, field_validator, model_validator
from pydantic.dataclasses import dataclass
from typing_extensions import Annotated

from ..errors import OptionsError
from ..util.io import read_json
from ..util.validation import must_be, validate

# Upper bounds, checked before anything is allocated: a typo or a crafted file (also inside a saved
# pipeline) must fail with the key's name, not allocate gigabytes or fail in the allocator. Far above
# the published models (the largest: dim 4096, projection 512, 2 layers, 2 highway, 2048 filters, 93.6M
# parameters).
MAX_DIM = 65_536
MAX_LAYERS = 64
MAX_FILTERS = 64
MAX_CHARACTERS_PER_TOKEN = 1024
MAX_PARAMETERS = 2**30  # 4 GiB as float32
# bilm-tf trains with 261 character rows (ids 0..260, no padding id); prediction adds a zero row for
# the padding id 0, so published options say 261 or 262 and both describe the same weights.
N_CHARACTERS_ALLOWED = (261, 262)


# Values are strict: nothing is coerced ("64" is no 64, true no 1), numbers are finite; an int is a float.
_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False, validate_by_name=True)
Size = Annotated[int, Field(strict=True, ge=1, le=MAX_DIM)]
Flag = Annotated[bool, must_be("true or false", strict=True)]
Clip = Optional[Annotated[float, must_be("a positive finite number or null (no clipping)", strict=True, gt=0)]]
Count = Optional[Annotated[int, Field(strict=True, ge=1)]]
Positive = Optional[Annotated[float, must_be("a positive finite number", strict=True, gt=0)]]
Filter = Tuple[Size, Size]  # [width, count]


@dataclass(config=_STRICT)
class LSTMOptions:
    dim: Size
    projection_dim: Size
    n_layers: Annotated[int, Field(strict=True, ge=1, le=MAX_LAYERS)]
    use_skip_connections: Flag = False
    cell_clip: Clip = None
    proj_clip: Clip = None


@dataclass(config=_STRICT)
class CharCNNOptions:
    embedding_dim: Size = Field(validation_alias=AliasPath("embedding", "dim"))
    filters: List[Filter] = must_be("a non-empty list of [width, count]", min_length=1, max_length=MAX_FILTERS)
    n_highway: Annotated[int, Field(strict=True, ge=0, le=MAX_LAYERS)] = 0
    n_characters: int = must_be("261 (training) or 262 (prediction)", default=262, strict=True, ge=261, le=262)
    max_characters_per_token: Annotated[int, Field(strict=True, ge=3, le=MAX_CHARACTERS_PER_TOKEN)] = 50
    activation: Literal["relu", "tanh"] = must_be("one of ('relu', 'tanh')", default="relu")

    @field_validator("n_highway", mode="before")
    @classmethod
    def _no_highway(cls, value: Any) -> Any:
        return 0 if value is None else value

    @property
    def n_filters(self) -> int:
        return sum(n for _, n in self.filters)


@dataclass(config=_STRICT)
class TrainingOptions:
    """Keys that only the original trainer reads, flat in the file; kept so that a round trip loses nothing."""

    bidirectional: Optional[Flag] = None
    dropout: Optional[float] = must_be("a number in [0, 1)", default=None, strict=True, ge=0, lt=1)
    all_clip_norm_val: Positive = None
    n_epochs: Count = None
    n_train_tokens: Count = None
    batch_size: Count = None
    n_tokens_vocab: Count = None
    unroll_steps: Count = None
    n_negative_samples_batch: Count = None
    learning_rate: Positive = None
    sample_softmax: Optional[Flag] = None
    share_embedding_softmax: Optional[Flag] = None


@dataclass(config=_STRICT)
class ElmoOptions:
    lstm: LSTMOptions
    char_cnn: CharCNNOptions
    training: TrainingOptions = Field(default_factory=TrainingOptions)

    @model_validator(mode="after")
    def _fits(self) -> "ElmoOptions":
        """Checks across keys: filters fit a token, and the model fits in memory (before any allocation)."""
        for i, (width, _) in enumerate(self.char_cnn.filters):
            if width > self.char_cnn.max_characters_per_token:
                raise OptionsError(
                    f"'char_cnn.filters[{i}]' width {width} exceeds max_characters_per_token "
                    f"{self.char_cnn.max_characters_per_token}"
                )
        _check_size(self.lstm, self.char_cnn)
        return self

    @property
    def projection_dim(self) -> int:
        return self.lstm.projection_dim

    @property
    def output_dim(self) -> int:
        """Width of every output layer: forward and backward halves side by side."""
        return 2 * self.lstm.projection_dim

    @property
    def n_output_layers(self) -> int:
        """L + 1: the token layer plus one per LSTM layer."""
        return self.lstm.n_layers + 1

    @classmethod
    def from_dict(cls, data: Dict[str, Any], where: str = "") -> "ElmoOptions":
        """The file's layout: `lstm`, `char_cnn`, and the trainer's keys flat beside them."""
        if not isinstance(data, dict):
            raise OptionsError(f"{where}options must be a JSON object, got {type(data).__name__}")
        model = {k: v for k, v in data.items() if k in ("lstm", "char_cnn")}
        flat = {k: v for k, v in data.items() if k not in model}
        training = validate(TrainingOptions, flat, OptionsError, where)
        return validate(cls, {**model, "training": training}, OptionsError, where)

    @classmethod
    def from_file(cls, path: Union[str, Path]) -> "ElmoOptions":
        data = read_json(path, "options", OptionsError)
        try:
            return cls.from_dict(data, where=f"{path}: ")
        except OptionsError as err:
            raise OptionsError(str(err)) from None

    def to_dict(self) -> Dict[str, Any]:
        lstm = {k: v for k, v in asdict(self.lstm).items() if v is not None}
        char_cnn = asdict(self.char_cnn)
        char_cnn = {"embedding": {"dim": char_cnn.pop("embedding_dim")}, **char_cnn}
        char_cnn["filters"] = [list(f) for f in self.char_cnn.filters]
        training = {k: v for k, v in asdict(self.training).items() if v is not None}
        return {"lstm": lstm, "char_cnn": char_cnn, **training}

    def to_file(self, path: Union[str, Path]) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf8")


def with_changes(options: ElmoOptions, changes: Mapping[str, Any]) -> ElmoOptions:
    """`options` with keys of the file's layout changed by their dotted names (`{"lstm.dim": 1024}`), the
    result checked as a file's options are: how a new size is described from an existing one.

    options (ElmoOptions): the options to start from.
    changes (Mapping[str, Any]): dotted key -> new value.
    RETURNS (ElmoOptions): the changed options.
    """
    data = options.to_dict()
    for key, value in changes.items():
        *sections, name = key.split(".")
        block: Any = data
        for section in sections:
            block = block.get(section) if isinstance(block, dict) else None
        if not isinstance(block, dict) or name not in block:
            raise OptionsError(f"the options have no key {key!r}; keys look like lstm.dim or char_cnn.filters")
        block[name] = value
    return ElmoOptions.from_dict(data, where=f"changed by {', '.join(changes)}: ")


def parameter_counts(lstm: LSTMOptions, char_cnn: CharCNNOptions) -> Dict[str, int]:
    """How many parameters each key's part of the model has (as elmo/nn/char_encoder.py and elmo/nn/lstm.py build
    it): the memory estimate made before anything is allocated."""
    emb, n_filters, proj, dim = char_cnn.embedding_dim, char_cnn.n_filters, lstm.projection_dim, lstm.dim
    return {
        "char_cnn.embedding.dim": N_CHARACTERS_ALLOWED[-1] * emb,
        "char_cnn.filters": sum(width * emb * count + count for width, count in char_cnn.filters)
        + (n_filters * proj + proj if n_filters != proj else 0),
        "char_cnn.n_highway": char_cnn.n_highway * 2 * (n_filters * n_filters + n_filters),
        "lstm.dim": lstm.n_layers * 2 * (2 * proj * 4 * dim + 4 * dim + dim * proj),
    }


def _check_size(lstm: LSTMOptions, char_cnn: CharCNNOptions) -> None:
    counts = parameter_counts(lstm, char_cnn)
    total = sum(counts.values())
    if total > MAX_PARAMETERS:
        largest = max(counts, key=lambda key: counts[key])
        raise OptionsError(
            f"the options describe a model of {total:,} parameters ({4 * total / 2**30:.1f} GiB as float32), "
            f"above the limit of {MAX_PARAMETERS:,} ({4 * MAX_PARAMETERS / 2**30:.0f} GiB); most of them come "
            f"from '{largest}' ({counts[largest]:,}{' with lstm.n_layers' if largest == 'lstm.dim' else ''}); "
            "is it a typo?"
        )


_ORIGINAL_FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]


def _preset(dim: int, proj: int, n_highway: int) -> Dict[str, Any]:
    return {
        "lstm": {
            "dim": dim,
            "projection_dim": proj,
            "n_layers": 2,
            "cell_clip": 3,
            "proj_clip": 3,
            "use_skip_connections": True,
        },
        "char_cnn": {
            "embedding": {"dim": 16},
            "filters": _ORIGINAL_FILTERS,
            "n_highway": n_highway,
            "n_characters": 262,
            "max_characters_per_token": 50,
            "activation": "relu",
        },
    }


# Model sizes, defined here only (`init-config` writes the pretraining configs from them): the published
# English models (elmo_2x1024_128_2048cnn_1xhighway and its siblings), and "tiny", the size of the
# reference test fixtures, for tests and demos.
PRESETS: Dict[str, Dict[str, Any]] = {
    "tiny": {
        **_preset(32, 16, 1),
        "char_cnn": {**_preset(32, 16, 1)["char_cnn"], "embedding": {"dim": 4}, "filters": [[1, 4], [2, 8], [3, 16]]},
    },
    "small": _preset(1024, 128, 1),
    "medium": _preset(2048, 256, 1),
    "original": _preset(4096, 512, 2),
}


def preset(name: str) -> ElmoOptions:
    """The options of a model size: 'small', 'medium', 'original' (the published ones) or 'tiny'."""
    if name not in PRESETS:
        raise OptionsError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return ElmoOptions.from_dict(json.loads(json.dumps(PRESETS[name])))
