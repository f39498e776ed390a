"""ELMoForManyLangs (HIT-SCIR) models, computed as its code computes them, on this package's biLM.

Its weights are converted once, at load time, into the layout the rest of the package runs (the same
char-CNN, highway and LSTM code as the bilm-tf models), and only what is new is added: the code-point
characters and the optional word embedding (the torch modules in elmo/manylangs/model.py). What its code
does, and how each piece maps here:

- Char-CNN: convolutions, max over positions, then the config's activation; highway layers always with
  ReLU. Its highway computes g * x + (1 - g) * relu(A x) with g = sigmoid(B x), one Linear [A; B]; here
  the stored TF convention c * relu(T x) + (1 - c) * x, so T = A and c = 1 - g = sigmoid(-B x).
- Word embedding (word_dim > 0): [word vector; highway output] (word first), then one linear
  projection to projection_dim, which its code applies even when the widths already agree.
- LSTM: AllenNLP's cell, gates i, f, g, o, no bias on the input matrix and one on the recurrent matrix,
  no forget bias added at run time. Here gates are in TF's order i, j(g), f, o with one bias and +1
  added to the forget gate at run time (elmo/nn/lstm.py), so the gate blocks are reordered and 1 is taken off
  the forget bias. The cell is clipped, then the projection; a clip of 0 (or none) means no clip.
  Residual connections from the second layer on, always (no config key); the recurrent state is the
  output before the residual, as in elmo/nn/lstm.py.
- Layer 0 = [x; x]; the boundaries are its `<bos>` / `<eos>` tokens.

Stateless by default, like every model of this package: its own encoder carries states across calls
and runs batches in a shuffled order, which is not reproduced (a fresh Embedder on one batch is what
this matches).

The `.pkl` files are torch state dicts, read with `weights_only=True`: anything else is refused.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

import torch

from ..errors import InputFileError
from ..formats.base import FormatDefaults, WeightEntry, check_finite
from ..formats.detect import ModelLayout
from ..formats.errors import WeightsError
from ..nn.bilm import BiLM
from ..nn.lstm import FORGET_BIAS
from ..nn.options import MAX_DIM, MAX_PARAMETERS, ElmoOptions, OptionsError, parameter_counts
from ..util.io import check_input_file, read_json, read_text
from .chars import parse_dic
from .model import ManyLangsBiLM, ManyLangsEncoder, ManyLangsVocab

# The model config its package ships and its released models name (both files hold the same values):
# used, as its code does, when the model directory has no file of that name.
_RELEASED_CONFIG = {
    "encoder": {"name": "elmo", "projection_dim": 512, "cell_clip": 3, "proj_clip": 3, "dim": 4096, "n_layers": 2},
    "token_embedder": {
        "name": "cnn",
        "activation": "relu",
        "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]],
        "n_highway": 2,
        "word_dim": 100,
        "char_dim": 50,
        "max_characters_per_token": 50,
    },
}
PACKAGED_CONFIGS = {
    "cnn_50_100_512_4096_sample.json": _RELEASED_CONFIG,
    "cnn_0_100_512_4096_sample.json": _RELEASED_CONFIG,
}


def _model_config(directory: Path, layout: ModelLayout) -> Tuple[Dict[str, Any], str]:
    """The model config the directory's config.json names, found as its code finds it: the path given,
    then the file of that name in the directory, then the config its package ships. An absolute
    `config_path` (the released models name one on their authors' machine) is not followed outside
    the directory."""
    config_file = directory / layout.files["config"]
    config = read_json(config_file, "ELMoForManyLangs config", OptionsError)
    try:
        name = str(config["config_path"])
    except (KeyError, TypeError) as err:
        raise OptionsError(
            f"{config_file} must be a JSON object with a 'config_path' key (ELMoForManyLangs' config.json): {err}"
        ) from None
    model_dir = config_file.parent
    base = PurePosixPath(name.replace("\\", "/")).name
    candidates = [] if PurePosixPath(name).is_absolute() or ".." in PurePosixPath(name).parts else [model_dir / name]
    for candidate in [*candidates, model_dir / base]:
        if candidate.is_file():
            return read_json(candidate, "ELMoForManyLangs model config", OptionsError), str(candidate)
    if base in PACKAGED_CONFIGS:
        return PACKAGED_CONFIGS[base], f"{base} (the config ELMoForManyLangs ships)"
    raise OptionsError(
        f"{config_file} names the model config {name!r}, which is neither in {model_dir} nor one that "
        f"ELMoForManyLangs ships ({', '.join(PACKAGED_CONFIGS)}); put that file into the model directory"
    )


def options_from_config(config: Dict[str, Any], source: str) -> Tuple[ElmoOptions, int]:
    """ElmoOptions (sizes of the char-CNN and LSTM) and the word embedding's width, from a model config."""
    try:
        encoder, embedder = config["encoder"], config["token_embedder"]
        if str(encoder.get("name", "")).lower() != "elmo" or str(embedder.get("name", "")).lower() != "cnn":
            raise OptionsError(
                f"encoder {encoder.get('name')!r} with token_embedder {embedder.get('name')!r}: only the 'elmo' "
                "encoder with the 'cnn' token embedder (the released models) can be loaded"
            )
        if not embedder.get("char_dim"):
            raise OptionsError("'token_embedder.char_dim' is 0: models without characters are not supported")
        word_dim = embedder.get("word_dim") or 0
        if isinstance(word_dim, bool) or not isinstance(word_dim, int) or not 0 <= word_dim <= MAX_DIM:
            raise OptionsError(f"'token_embedder.word_dim' must be an integer from 0 to {MAX_DIM}, got {word_dim!r}")
        options = ElmoOptions.from_dict(
            {
                "lstm": {
                    "dim": encoder["dim"],
                    "projection_dim": encoder["projection_dim"],
                    "n_layers": encoder["n_layers"],
                    # Its cell clips only when the value is truthy.
                    "cell_clip": encoder.get("cell_clip") or None,
                    "proj_clip": encoder.get("proj_clip") or None,
                    "use_skip_connections": True,
                },
                "char_cnn": {
                    "embedding": {"dim": embedder["char_dim"]},
                    "filters": embedder["filters"],
                    "n_highway": embedder.get("n_highway", 0),
                    # Unused by this format: its character table is as large as char.dic.
                    "n_characters": 262,
                    "max_characters_per_token": embedder["max_characters_per_token"],
                    "activation": embedder.get("activation", "relu"),
                },
            }
        )
    except (KeyError, TypeError, AttributeError) as err:
        raise OptionsError(f"ELMoForManyLangs model config {source} lacks or misreads the key {err}") from None
    except OptionsError as err:
        raise OptionsError(f"ELMoForManyLangs model config {source}: {err}") from None
    return options, word_dim


def load_state_dict(path: Path) -> Dict[str, torch.Tensor]:
    """A `.pkl` of its code: a torch state dict (old pickle or zip format, maybe saved from a GPU)."""
    check_input_file(path, "ELMoForManyLangs weights", WeightsError)
    try:
        state = torch.load(path, weights_only=True, map_location="cpu")
    # torch's weights-only unpickler raises whatever its checks hit on bytes that are no state dict
    # (UnpicklingError, AssertionError, IndexError, KeyError, ...): each says this file is damaged.
    except Exception as err:
        raise WeightsError(
            f"ELMoForManyLangs weights file {path} is not a plain torch state dict, or is damaged "
            f"({str(err).splitlines()[0] if str(err) else type(err).__name__}); it is not unpickled any "
            "further. Get the model's files from its original source again"
        ) from None
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise WeightsError(
            f"ELMoForManyLangs weights file {path} holds a {type(state).__name__}, not a state dict of tensors"
        )
    not_float = [k for k, v in state.items() if not v.is_floating_point()]
    if not_float:
        raise WeightsError(
            f"ELMoForManyLangs weights file {path}: tensor '{not_float[0]}' holds {state[not_float[0]].dtype} "
            "values, not floating-point numbers; the file holds something else than the model's weights"
        )
    weights = {k: v.float() for k, v in state.items()}
    for key, value in weights.items():
        check_finite(value.numpy(), path, key)
    return weights


_Convert = Callable[[torch.Tensor], torch.Tensor]

# The fewest bytes a stored weight takes (float16): the embeddings' file must hold at least this much.
_MIN_BYTES_PER_WEIGHT = 2


def _check_embedding_sizes(
    options: ElmoOptions, vocab: ManyLangsVocab, word_dim: int, weights: Path, source: str
) -> None:
    """Refuse, before allocating, embeddings that the dictionaries and dimensions make too large for
    memory or for the weights file that must hold them (a crafted or mismatched config)."""
    n_words = 0 if vocab.words is None else len(vocab.words)
    char_dim = options.char_cnn.embedding_dim
    sizes = {
        f"char_dim {char_dim} x {vocab.n_char_rows} char.dic rows": vocab.n_char_rows * char_dim,
        f"word_dim {word_dim} x {n_words} word.dic words": (n_words + 1) * word_dim,
    }
    embeddings = sum(sizes.values())
    total = embeddings + sum(parameter_counts(options.lstm, options.char_cnn).values())
    largest = max(sizes, key=lambda key: sizes[key])
    if total > MAX_PARAMETERS:
        raise OptionsError(
            f"ELMoForManyLangs model config {source} describes a model of {total:,} parameters, above the "
            f"limit of {MAX_PARAMETERS:,}; most come from {largest}: is it a typo?"
        )
    stored = check_input_file(weights, "ELMoForManyLangs weights", WeightsError).stat().st_size
    if embeddings * _MIN_BYTES_PER_WEIGHT > stored:
        raise WeightsError(
            f"{weights} holds {stored:,} bytes, too few for the {embeddings:,} embedding weights of the model "
            f"config {source} ({' and '.join(sizes)}); the config, the dictionaries and the weights do not "
            "belong together"
        )


def _entry(key: str, shape: Tuple[int, ...], convert: _Convert, target: torch.Tensor) -> WeightEntry:
    """One tensor of a .pkl, read only (this format is not written)."""
    return WeightEntry(key, shape, convert, None, target)


def _same(x: torch.Tensor) -> torch.Tensor:
    return x


def _gates_to_tf(weight: torch.Tensor, cell: int) -> torch.Tensor:
    """Gate blocks along dim 0 from its order i, f, g, o to TF's i, j(=g), f, o."""
    i, f, g, o = weight.split(cell, dim=0)
    return torch.cat([i, g, f, o], dim=0)


def _token_embedder_entries(bilm: ManyLangsBiLM, word_dim: int) -> Iterator[WeightEntry]:
    cnn = bilm.options.char_cnn
    encoder = bilm.char_encoder
    assert isinstance(encoder, ManyLangsEncoder)
    n_filters = cnn.n_filters
    char_rows = torch.from_numpy(bilm.vocab.char_rows())

    def chars_to_rows(stored: torch.Tensor) -> torch.Tensor:
        table = torch.zeros_like(encoder.char_embed.weight)
        table[char_rows] = stored
        return table

    def words_to_rows(stored: torch.Tensor) -> torch.Tensor:
        return torch.cat([torch.zeros(1, stored.shape[1]), stored])

    yield _entry(
        "char_emb_layer.embedding.weight", (len(char_rows), cnn.embedding_dim), chars_to_rows, encoder.char_embed.weight
    )
    if encoder.word_embed is not None:
        n_words = encoder.word_embed.weight.shape[0] - 1
        yield _entry("word_emb_layer.embedding.weight", (n_words, word_dim), words_to_rows, encoder.word_embed.weight)
    for i, (conv, (width, count)) in enumerate(zip(encoder.convs, cnn.filters)):
        yield _entry(f"convolutions.{i}.weight", (count, cnn.embedding_dim, width), _same, conv.weight)
        yield _entry(f"convolutions.{i}.bias", (count,), _same, conv.bias)
    for k, highway in enumerate(encoder.highways):
        # One Linear [A; B]: A is the transform, B the gate of the carried input (1 - ours).
        weight, bias = f"highways._layers.{k}.weight", f"highways._layers.{k}.bias"
        yield _entry(weight, (2 * n_filters, n_filters), lambda w: w[:n_filters], highway.transform.weight)
        yield _entry(bias, (2 * n_filters,), lambda b: b[:n_filters], highway.transform.bias)
        yield _entry(weight, (2 * n_filters, n_filters), lambda w: -w[n_filters:], highway.carry.weight)
        yield _entry(bias, (2 * n_filters,), lambda b: -b[n_filters:], highway.carry.bias)
    projection = encoder.projection
    yield _entry("projection.weight", (bilm.options.projection_dim, n_filters + word_dim), _same, projection.weight)
    yield _entry("projection.bias", (bilm.options.projection_dim,), _same, projection.bias)


def _encoder_entries(bilm: ManyLangsBiLM) -> Iterator[WeightEntry]:
    for index, layer in enumerate(bilm.lstm.layers):
        cell = layer.cell_dim

        def to_tf(w: torch.Tensor, cell: int = cell) -> torch.Tensor:
            return _gates_to_tf(w, cell).t()

        def bias_to_tf(b: torch.Tensor, cell: int = cell) -> torch.Tensor:
            b = _gates_to_tf(b, cell).clone()
            b[2 * cell : 3 * cell] -= FORGET_BIAS  # added back at run time by elmo/nn/lstm.py
            return b

        for d, direction in enumerate(("forward", "backward")):
            key = f"{direction}_layer_{index}"
            yield _entry(f"{key}.input_linearity.weight", (4 * cell, layer.input_dim), to_tf, layer.input_weight[d])
            yield _entry(
                f"{key}.state_linearity.weight", (4 * cell, layer.projection_dim), to_tf, layer.state_weight[d]
            )
            yield _entry(f"{key}.state_linearity.bias", (4 * cell,), bias_to_tf, layer.input_bias[d])
            projection = layer.projection_weight[d]
            yield _entry(f"{key}.state_projection.weight", (layer.projection_dim, cell), lambda w: w.t(), projection)


def load_manylangs(directory: Path, layout: ModelLayout) -> ManyLangsBiLM:
    """The model in `directory` (files as `layout` says), weights converted, in eval mode."""
    config, config_source = _model_config(directory, layout)
    options, word_dim = options_from_config(config, config_source)
    if "char_dic" not in layout.files:
        raise InputFileError(f"{directory / layout.root} has no char.dic, which the model config {config_source} needs")
    char_path = directory / layout.files["char_dic"]
    words: Optional[Dict[str, int]] = None
    word_path = directory / layout.files.get("word_dic", str(PurePosixPath(layout.root) / "word.dic"))
    if word_dim:
        if "word_dic" not in layout.files:
            raise InputFileError(
                f"{directory / layout.root} has no word.dic, which the model config {config_source} needs "
                f"(word_dim {word_dim})"
            )
        words = parse_dic(read_text(word_path, "ELMoForManyLangs word.dic"), str(word_path))
    vocab = ManyLangsVocab(parse_dic(read_text(char_path, "ELMoForManyLangs char.dic"), str(char_path)), words)
    vocab.check(str(char_path), str(word_path))
    _check_embedding_sizes(options, vocab, word_dim, directory / layout.files["token_embedder"], config_source)
    bilm = ManyLangsBiLM(options, vocab, word_dim)
    entries = {"token_embedder": list(_token_embedder_entries(bilm, word_dim)), "encoder": list(_encoder_entries(bilm))}
    values = []
    for role, role_entries in entries.items():
        path = directory / layout.files[role]
        state = load_state_dict(path)
        unused = sorted(set(state) - {entry.key for entry in role_entries})
        if unused:
            raise WeightsError(
                f"{path} has tensors the model config {config_source} does not use: {', '.join(unused[:6])}; "
                "the config and the weights do not belong together"
            )
        for entry in role_entries:
            if entry.key not in state:
                raise WeightsError(
                    f"{path} has no tensor '{entry.key}', which the model config {config_source} needs "
                    f"(shape {entry.shape})"
                )
            stored = state[entry.key]
            if tuple(stored.shape) != entry.shape:
                raise WeightsError(
                    f"{path}: tensor '{entry.key}' has shape {tuple(stored.shape)}, but the model config "
                    f"{config_source}, char.dic and word.dic need {entry.shape}; the files do not belong together"
                )
            values.append((entry.to_model(stored), entry.target))
    with torch.no_grad():
        for value, target in values:
            target.copy_(value)
    bilm.clear_caches()
    return bilm.eval()


class ManyLangsFormat(FormatDefaults):
    """ELMoForManyLangs: `config.json`, `token_embedder.pkl`, `encoder.pkl` (with `char.dic`, `word.dic`
    and the model config the `config.json` names)."""

    description_key: Optional[str] = "manylangs"  # the key saved pipelines carry; never rename it

    def read_options(self, directory: Path, layout: ModelLayout) -> ElmoOptions:
        config, source = _model_config(directory, layout)
        return options_from_config(config, source)[0]

    def load(self, directory: Path, layout: ModelLayout) -> BiLM:
        return load_manylangs(directory, layout)

    def describe(self, bilm: BiLM) -> Optional[Dict[str, Any]]:
        return bilm.description() if isinstance(bilm, ManyLangsBiLM) else None

    def rebuild(self, options: ElmoOptions, description: Dict[str, Any]) -> BiLM:
        return ManyLangsBiLM(options, ManyLangsVocab.from_dict(description["vocab"]), int(description["word_dim"]))


MANYLANGS = ManyLangsFormat()
