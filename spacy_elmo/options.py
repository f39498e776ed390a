"""ELMo's `options.json`: read, validate, write, and the published sizes as presets.

The file is the contract between the published weights and the model that loads them, so every key is
checked here, once, with an error that names the key: a typo or a wrong size found later would surface as
a shape error deep inside torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from .errors import ElmoError, InputFileError
from .io import read_text

ACTIVATIONS = ("relu", "tanh")
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


class OptionsError(ElmoError):
    """An options.json that cannot describe an ELMo model; the message names the key."""


class OptionsFileError(OptionsError, InputFileError):
    """An options file that is missing, not JSON text, or describes no ELMo model; names the file."""


@dataclass
class LSTMOptions:
    dim: int
    projection_dim: int
    n_layers: int
    cell_clip: Optional[float] = None
    proj_clip: Optional[float] = None
    use_skip_connections: bool = False


@dataclass
class CharCNNOptions:
    embedding_dim: int
    filters: List[Tuple[int, int]]
    max_characters_per_token: int = 50
    n_characters: int = 262
    n_highway: int = 0
    activation: str = "relu"

    @property
    def n_filters(self) -> int:
        return sum(n for _, n in self.filters)


@dataclass
class TrainingOptions:
    """Keys that only the original trainer reads; kept so that a round trip loses nothing."""

    bidirectional: Optional[bool] = None
    dropout: Optional[float] = None
    all_clip_norm_val: Optional[float] = None
    n_epochs: Optional[int] = None
    n_train_tokens: Optional[int] = None
    batch_size: Optional[int] = None
    n_tokens_vocab: Optional[int] = None
    unroll_steps: Optional[int] = None
    n_negative_samples_batch: Optional[int] = None
    learning_rate: Optional[float] = None
    sample_softmax: Optional[bool] = None
    share_embedding_softmax: Optional[bool] = None


@dataclass
class ElmoOptions:
    lstm: LSTMOptions
    char_cnn: CharCNNOptions
    training: TrainingOptions = field(default_factory=TrainingOptions)

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
    def from_dict(cls, data: Dict[str, Any]) -> "ElmoOptions":
        return _parse(data)

    @classmethod
    def from_file(cls, path: Union[str, Path]) -> "ElmoOptions":
        text = read_text(path, "options", OptionsFileError)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise OptionsFileError(f"options file {path} is not valid JSON: {err}") from None
        try:
            return _parse(data)
        except OptionsError as err:
            raise OptionsFileError(f"{path}: {err}") from None

    def to_dict(self) -> Dict[str, Any]:
        lstm: Dict[str, Any] = {
            "dim": self.lstm.dim,
            "projection_dim": self.lstm.projection_dim,
            "n_layers": self.lstm.n_layers,
            "use_skip_connections": self.lstm.use_skip_connections,
        }
        for key in ("cell_clip", "proj_clip"):
            if getattr(self.lstm, key) is not None:
                lstm[key] = getattr(self.lstm, key)
        data: Dict[str, Any] = {
            "lstm": lstm,
            "char_cnn": {
                "embedding": {"dim": self.char_cnn.embedding_dim},
                "filters": [list(f) for f in self.char_cnn.filters],
                "n_highway": self.char_cnn.n_highway,
                "n_characters": self.char_cnn.n_characters,
                "max_characters_per_token": self.char_cnn.max_characters_per_token,
                "activation": self.char_cnn.activation,
            },
        }
        for f in fields(TrainingOptions):
            value = getattr(self.training, f.name)
            if value is not None:
                data[f.name] = value
        return data

    def to_file(self, path: Union[str, Path]) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf8")


_LSTM_KEYS = {"dim", "projection_dim", "n_layers", "cell_clip", "proj_clip", "use_skip_connections"}
_CNN_KEYS = {"embedding", "filters", "n_highway", "n_characters", "max_characters_per_token", "activation"}
_TOP_KEYS = {"lstm", "char_cnn"} | {f.name for f in fields(TrainingOptions)}


def _require(section: Dict[str, Any], key: str, where: str) -> Any:
    if key not in section:
        raise OptionsError(f"missing key '{where}.{key}'")
    return section[key]


def _positive_int(value: Any, name: str, minimum: int = 1, maximum: int = MAX_DIM) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise OptionsError(f"'{name}' must be an integer >= {minimum}, got {value!r}")
    if value > maximum:
        raise OptionsError(f"'{name}' is {value}, above the limit of {maximum}; is it a typo?")
    return value


def _positive_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def _optional_clip(value: Any, name: str) -> Optional[float]:
    if value is None:
        return None
    if not _positive_number(value):
        raise OptionsError(f"'{name}' must be a positive finite number or null (no clipping), got {value!r}")
    return float(value)


def parameter_counts(lstm: LSTMOptions, char_cnn: CharCNNOptions) -> Dict[str, int]:
    """How many parameters each key's part of the model has (as nn/char_encoder.py and nn/lstm.py build
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


def _check_unknown(section: Dict[str, Any], allowed: set, where: str) -> None:
    unknown = sorted(set(section) - allowed)
    if unknown:
        raise OptionsError(
            f"unknown key(s) {', '.join(repr(f'{where}{k}') for k in unknown)}; allowed: {', '.join(sorted(allowed))}"
        )


def _parse(data: Any) -> ElmoOptions:
    if not isinstance(data, dict):
        raise OptionsError(f"options must be a JSON object, got {type(data).__name__}")
    _check_unknown(data, _TOP_KEYS, "")
    lstm_raw = _require(data, "lstm", "options")
    cnn_raw = _require(data, "char_cnn", "options")
    if not isinstance(lstm_raw, dict) or not isinstance(cnn_raw, dict):
        raise OptionsError("'lstm' and 'char_cnn' must be JSON objects")
    _check_unknown(lstm_raw, _LSTM_KEYS, "lstm.")
    _check_unknown(cnn_raw, _CNN_KEYS, "char_cnn.")

    skip = lstm_raw.get("use_skip_connections", False)
    if not isinstance(skip, bool):
        raise OptionsError(f"'lstm.use_skip_connections' must be true or false, got {skip!r}")
    lstm = LSTMOptions(
        dim=_positive_int(_require(lstm_raw, "dim", "lstm"), "lstm.dim"),
        projection_dim=_positive_int(_require(lstm_raw, "projection_dim", "lstm"), "lstm.projection_dim"),
        n_layers=_positive_int(_require(lstm_raw, "n_layers", "lstm"), "lstm.n_layers", maximum=MAX_LAYERS),
        cell_clip=_optional_clip(lstm_raw.get("cell_clip"), "lstm.cell_clip"),
        proj_clip=_optional_clip(lstm_raw.get("proj_clip"), "lstm.proj_clip"),
        use_skip_connections=skip,
    )

    embedding = _require(cnn_raw, "embedding", "char_cnn")
    if not isinstance(embedding, dict) or set(embedding) != {"dim"}:
        raise OptionsError(f"'char_cnn.embedding' must be {{\"dim\": N}}, got {embedding!r}")
    filters_raw = _require(cnn_raw, "filters", "char_cnn")
    if not isinstance(filters_raw, list) or not filters_raw:
        raise OptionsError(f"'char_cnn.filters' must be a non-empty list of [width, count], got {filters_raw!r}")
    if len(filters_raw) > MAX_FILTERS:
        raise OptionsError(f"'char_cnn.filters' has {len(filters_raw)} entries, above the limit of {MAX_FILTERS}")
    max_chars = _positive_int(
        _require(cnn_raw, "max_characters_per_token", "char_cnn"),
        "char_cnn.max_characters_per_token",
        3,
        MAX_CHARACTERS_PER_TOKEN,
    )
    filters: List[Tuple[int, int]] = []
    for i, item in enumerate(filters_raw):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise OptionsError(f"'char_cnn.filters[{i}]' must be [width, count], got {item!r}")
        width = _positive_int(item[0], f"char_cnn.filters[{i}] width")
        count = _positive_int(item[1], f"char_cnn.filters[{i}] count")
        if width > max_chars:
            raise OptionsError(f"'char_cnn.filters[{i}]' width {width} exceeds max_characters_per_token {max_chars}")
        filters.append((width, count))
    n_characters = _require(cnn_raw, "n_characters", "char_cnn")
    if n_characters not in N_CHARACTERS_ALLOWED:
        raise OptionsError(f"'char_cnn.n_characters' must be 261 (training) or 262 (prediction), got {n_characters!r}")
    activation = _require(cnn_raw, "activation", "char_cnn")
    if activation not in ACTIVATIONS:
        raise OptionsError(f"'char_cnn.activation' must be one of {ACTIVATIONS}, got {activation!r}")
    char_cnn = CharCNNOptions(
        embedding_dim=_positive_int(embedding["dim"], "char_cnn.embedding.dim"),
        filters=filters,
        max_characters_per_token=max_chars,
        n_characters=n_characters,
        n_highway=_positive_int(cnn_raw.get("n_highway", 0) or 0, "char_cnn.n_highway", 0, MAX_LAYERS),
        activation=activation,
    )
    _check_size(lstm, char_cnn)
    training = TrainingOptions(**{f.name: data[f.name] for f in fields(TrainingOptions) if f.name in data})
    _check_training(training)
    return ElmoOptions(lstm=lstm, char_cnn=char_cnn, training=training)


def _check_training(training: TrainingOptions) -> None:
    for key in (
        "n_epochs",
        "n_train_tokens",
        "batch_size",
        "n_tokens_vocab",
        "unroll_steps",
        "n_negative_samples_batch",
    ):
        value = getattr(training, key)
        if value is not None:
            _positive_int(value, key, maximum=2**63 - 1)
    dropout = training.dropout
    if dropout is not None and (
        isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1
    ):
        raise OptionsError(f"'dropout' must be a number in [0, 1), got {dropout!r}")
    for key in ("all_clip_norm_val", "learning_rate"):
        value = getattr(training, key)
        if value is not None and not _positive_number(value):
            raise OptionsError(f"'{key}' must be a positive finite number, got {value!r}")
    for key in ("bidirectional", "sample_softmax", "share_embedding_softmax"):
        value = getattr(training, key)
        if value is not None and not isinstance(value, bool):
            raise OptionsError(f"'{key}' must be true or false, got {value!r}")


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


# Model sizes, defined here only (configs/pretrain_<name>.cfg are generated from them): the published
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
