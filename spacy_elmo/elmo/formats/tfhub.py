"""TF-Hub ELMo modules (TF1 hub format: Google's ELMo versions 2 and 3, DeepPavlov's Russian ELMo), read
without TensorFlow.

A module is a directory with `tfhub_module.pb`, `saved_model.pb` and `variables/variables.index` +
`variables.data-*` (tensor_bundle.py). Its variables are bilm-tf's under `bilm/`, so they are mapped onto
the HDF5 layout's names and conversions (bilm_tf.py `_entries`): `.../rnn/lstm_cell/{kernel, bias,
projection/kernel}` are `.../LSTMCell/{W_0, B, W_P_0}`, and `char_embed` has 262 rows (bilm-tf's zero
padding row first) where the HDF5 file has 261. The LSTM state variables are not weights: each copy of
the biLM graph keeps its own (zeros in an exported module), `bilm/Variable*` for the first and
`bilm_1/Variable*`, `bilm_2/...` for the next, and the published modules build two copies, one per
signature (`tokens` and `default`), sharing the weights under `bilm/`. The module carries states from
call to call, this package is stateless by default (a fresh module's first call is what it matches).
Any other variable that is neither a weight nor the mix is refused: the module is of another layout.

The sizes come from the variables' shapes. What the shapes cannot say is taken from bilm-tf's published
training options, which every known module was trained with: ReLU, cell and projection clips of 3,
skip connections, 50 characters a token. The graph (saved_model.pb) holds the clips only as anonymous
constants inside the LSTM's loop, whose names differ between exporters, so they are not read from it.

The module's character ids are bilm-tf's (UTF-8 bytes cut to 48, BOW/EOW, `<S>`/`</S>` rows), the
package's own. The module's trained scalar mix (`aggregation/weights` + `aggregation/scaling` in
Google's modules, `aggregation/elmo_output_ELMo_W` + `..._gamma` in DeepPavlov's) is the loaded
TfHubBiLM's `published_mix` (elmo/nn/tfhub.py), the pre-softmax weights and gamma, saved with a pipeline and
what `spacy-elmo.ScalarMix.v2` can start from (`published_mix_of`, a module directory or archive).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np
import torch

from ..errors import OptionsError
from ..nn.bilm import BiLM
from ..nn.options import ElmoOptions
from ..nn.tfhub import PublishedMix, TfHubBiLM
from .archive import is_archive, member_names, unpacked
from .base import FormatDefaults, check_finite
from .bilm_tf import weight_entries
from .detect import TFHUB_FILES, ModelLayout, detect_layout
from .errors import InputFileError, WeightsError
from .tensor_bundle import TensorBundle

MODULE_FILES = ("tfhub_module.pb", "saved_model.pb", "variables/variables.index")
INDEX = "variables/variables.index"

# bilm-tf's published training options, for what the variables' shapes do not state (options.json keys).
PUBLISHED_LSTM: Dict[str, Any] = {"cell_clip": 3.0, "proj_clip": 3.0, "use_skip_connections": True}
PUBLISHED_CHAR_CNN: Dict[str, Any] = {"max_characters_per_token": 50, "activation": "relu"}

_MIX_NAMES = (
    ("aggregation/weights", "aggregation/scaling"),  # Google's ELMo versions 2 and 3
    ("aggregation/elmo_output_ELMo_W", "aggregation/elmo_output_ELMo_gamma"),  # DeepPavlov's converter, elmo2tfhub
)
_STATE = re.compile(r"^bilm(_\d+)?/Variable(_\d+)?$")  # each graph copy's LSTM states
_LSTM_NAMES = (("/LSTMCell/W_0", "/rnn/lstm_cell/kernel"), ("/LSTMCell/B", "/rnn/lstm_cell/bias"))
_PROJECTION = ("/LSTMCell/W_P_0", "/rnn/lstm_cell/projection/kernel")


def is_tfhub_module(directory: Union[str, Path]) -> bool:
    directory = Path(directory)
    return all((directory / name).is_file() for name in MODULE_FILES)


def _bundle(directory: Path) -> TensorBundle:
    return TensorBundle(directory / INDEX)


def _shape(bundle: TensorBundle, name: str) -> Tuple[int, ...]:
    entry = bundle.entries.get(name)
    if entry is None:
        raise InputFileError(
            f"TF-Hub module {bundle.index_path.parent.parent} has no variable '{name}': it does not hold a "
            "bilm-tf ELMo biLM (variables under bilm/)"
        )
    return entry.shape


def _count(bundle: TensorBundle, pattern: str) -> int:
    n = 0
    while pattern.format(n) in bundle.entries:
        n += 1
    return n


def options_from_bundle(bundle: TensorBundle) -> ElmoOptions:
    """The biLM's sizes, from the shapes of its variables (see the module docstring for the rest)."""
    n_chars, char_dim = _shape(bundle, "bilm/char_embed")
    filters = []
    for i in range(_count(bundle, "bilm/CNN/W_cnn_{}")):
        _, width, _, count = _shape(bundle, f"bilm/CNN/W_cnn_{i}")
        filters.append((width, count))
    n_filters = sum(count for _, count in filters)
    projection = _shape(bundle, "bilm/CNN_proj/W_proj")[1] if "bilm/CNN_proj/W_proj" in bundle.entries else n_filters
    cell = "bilm/RNN_0/RNN/MultiRNNCell/Cell{}/rnn/lstm_cell/kernel"
    n_layers = _count(bundle, cell)
    if not filters or not n_layers:
        raise InputFileError(
            f"TF-Hub module {bundle.index_path.parent.parent} has no char-CNN filters or no LSTM layers"
        )
    dim = _shape(bundle, cell.format(0))[1] // 4
    lstm = {"dim": dim, "projection_dim": projection, "n_layers": n_layers, **PUBLISHED_LSTM}
    char_cnn = {
        "embedding": {"dim": char_dim},
        "filters": [list(f) for f in filters],
        "n_characters": n_chars,
        "n_highway": _count(bundle, "bilm/CNN_high_{}/W_carry"),
        **PUBLISHED_CHAR_CNN,
    }
    # The options a module implies, checked as any options.json is.
    where = f"TF-Hub module {bundle.index_path.parent.parent}: "
    try:
        return ElmoOptions.from_dict({"lstm": lstm, "char_cnn": char_cnn}, where=where)
    except OptionsError as err:
        raise InputFileError(str(err)) from None


def tfhub_options(directory: Union[str, Path]) -> ElmoOptions:
    return options_from_bundle(_bundle(Path(directory)))


def _bundle_name(hdf5_name: str) -> str:
    for stored, module in (*_LSTM_NAMES, _PROJECTION):
        hdf5_name = hdf5_name.replace(stored, module)
    return f"bilm/{hdf5_name}"


def _read_float(bundle: TensorBundle, name: str) -> np.ndarray:
    value = bundle.read(name)
    if value.dtype.kind != "f":
        raise WeightsError(f"checkpoint {bundle.index_path}: variable '{name}' holds {value.dtype}, not weights")
    with np.errstate(over="ignore"):
        converted = np.asarray(value, dtype=np.float32)
    check_finite(converted, bundle.index_path, name)
    return converted


def published_mix(bundle: TensorBundle) -> Optional[PublishedMix]:
    """The module's trained mix, or None where it has none under a known name."""
    for weights, gamma in _MIX_NAMES:
        if weights in bundle.entries and gamma in bundle.entries:
            return PublishedMix(
                [float(v) for v in _read_float(bundle, weights).ravel()], float(_read_float(bundle, gamma).ravel()[0])
            )
    return None


def _mix_in_module(directory: Path, source: Union[str, Path]) -> PublishedMix:
    mix = published_mix(_bundle(directory))
    if mix is None:
        known = "; ".join(" + ".join(pair) for pair in _MIX_NAMES)
        raise InputFileError(f"TF-Hub module {source} has no layer mix under a known name ({known})")
    return mix


def published_mix_of(path: Union[str, Path]) -> PublishedMix:
    """The trained mix of the TF-Hub module at `path`: its directory, or an archive as its publishers
    distribute it (tar.gz, the module at the top or in one folder; only its variables are unpacked)."""
    path = Path(path)
    if is_tfhub_module(path):
        return _mix_in_module(path, path)
    if not is_archive(path):
        raise InputFileError(
            f"{path} is neither a TF-Hub module directory ({', '.join(MODULE_FILES)}) nor an archive of one; "
            "only TF-Hub modules publish a trained layer mix"
        )
    layout = detect_layout(member_names(path), str(path), (TFHUB_FILES,))
    with unpacked(path, lambda name: name.startswith(f"{layout.root}/variables/".lstrip("/"))) as directory:
        return _mix_in_module(directory / layout.root, path)


def bilm_from_bundle(bundle: TensorBundle) -> TfHubBiLM:
    """The biLM whose variables `bundle` holds, in eval mode, with the module's mix."""
    module = bundle.index_path.parent.parent
    options = options_from_bundle(bundle)
    bilm = TfHubBiLM(options, published_mix(bundle))
    entries = list(weight_entries(bilm))
    used = {_bundle_name(entry.key) for entry in entries}
    mix_names = {name for pair in _MIX_NAMES for name in pair}
    unused = sorted(n for n in bundle.entries if n not in used and n not in mix_names and not _STATE.match(n))
    if unused:
        raise InputFileError(
            f"TF-Hub module {module} has variables this reader does not use: {', '.join(unused[:6])}; "
            "it is not a bilm-tf ELMo module of a known layout"
        )
    values: Dict[str, np.ndarray] = {}
    arrays = []
    for entry in entries:
        module_name = _bundle_name(entry.key)
        if module_name not in values:
            values[module_name] = _read_float(bundle, module_name)
        value = values[module_name]
        if entry.key == "char_embed":  # bilm-tf's zero row for id 0 (no token) is the module's row 0
            value = value[1:]
        if tuple(value.shape) != entry.shape:
            raise InputFileError(
                f"TF-Hub module {module}: variable '{module_name}' has shape {value.shape}, but the "
                f"biLM its other variables describe ({options.lstm}) needs {entry.shape}"
            )
        arrays.append((np.ascontiguousarray(entry.to_model(value)), entry.target))
    with torch.no_grad():
        for value, target in arrays:
            target.copy_(torch.from_numpy(value))
        bilm.char_encoder.char_embed.weight[0].zero_()
    bilm.clear_caches()
    return bilm.eval()


def load_tfhub(directory: Union[str, Path]) -> TfHubBiLM:
    """The biLM of the TF-Hub module in `directory`, in eval mode, with its mix as `published_mix`."""
    return bilm_from_bundle(_bundle(Path(directory)))


class TfHubFormat(FormatDefaults):
    """The TF-Hub module format (`load_model` routes a module directory or archive here)."""

    description_key: Optional[str] = "tfhub"  # the key saved pipelines carry; never rename it

    def read_options(self, directory: Path, layout: ModelLayout) -> ElmoOptions:
        return tfhub_options(directory / layout.root)

    def load(self, directory: Path, layout: ModelLayout) -> BiLM:
        return load_tfhub(directory / layout.root)

    def describe(self, bilm: BiLM) -> Optional[Dict[str, Any]]:
        return bilm.description() if isinstance(bilm, TfHubBiLM) else None

    def rebuild(self, options: ElmoOptions, description: Dict[str, Any]) -> BiLM:
        mix = description.get("published_mix")
        return TfHubBiLM(options, None if mix is None else PublishedMix.from_dict(mix))


TFHUB = TfHubFormat()
