"""bilm-tf's and AllenNLP's format: an options JSON and the published weight layout (HDF5), read into
and written from a torch BiLM.

Every dataset's shape is checked against the options before anything is copied, so a weights file that
belongs to another model fails with the dataset's name and both shapes instead of a broadcasting error.
Conversions are pure transposes and the stored char embedding keeps its 261 rows, so save -> load is
bit-exact. The forget-gate bias of +1 is never stored (TF adds it at run time; so does elmo/nn/lstm.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Union

import h5py
import numpy as np
import torch

from ..errors import ElmoError
from ..nn.bilm import BiLM
from ..nn.chars import N_CHARS_TRAIN
from ..nn.options import ElmoOptions
from ..util.io import HDF5_DAMAGE, open_hdf5
from .base import FormatDefaults, WeightEntry, read_float_array
from .detect import ModelLayout
from .errors import WeightsError

# Where a folder holds several .hdf5 files that could be the weights, these names are the weights.


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _transpose(a: np.ndarray) -> np.ndarray:
    return a.T


def weight_entries(bilm: BiLM) -> Iterator[WeightEntry]:
    """The published layout's datasets (bilm-tf's names) and the parameters they fill."""
    options = bilm.options
    encoder = bilm.char_encoder
    emb_dim = options.char_cnn.embedding_dim
    yield WeightEntry("char_embed", (N_CHARS_TRAIN, emb_dim), _same, _same, encoder.char_embed.weight[1:])
    for i, (conv, (width, count)) in enumerate(zip(encoder.convs, options.char_cnn.filters)):
        # TF conv2d kernels are [1, width, in, out]; torch Conv1d wants [out, in, width].
        yield WeightEntry(
            f"CNN/W_cnn_{i}",
            (1, width, emb_dim, count),
            lambda a: a[0].transpose(2, 1, 0),
            lambda a: a.transpose(2, 1, 0)[None],
            conv.weight,
        )
        yield WeightEntry(f"CNN/b_cnn_{i}", (count,), _same, _same, conv.bias)
    n_filters = options.char_cnn.n_filters
    for k, highway in enumerate(encoder.highways):
        for name, linear in (("carry", highway.carry), ("transform", highway.transform)):
            yield WeightEntry(f"CNN_high_{k}/W_{name}", (n_filters, n_filters), _transpose, _transpose, linear.weight)
            yield WeightEntry(f"CNN_high_{k}/b_{name}", (n_filters,), _same, _same, linear.bias)
    if encoder.projection is not None:
        proj = options.projection_dim
        yield WeightEntry("CNN_proj/W_proj", (n_filters, proj), _transpose, _transpose, encoder.projection.weight)
        yield WeightEntry("CNN_proj/b_proj", (proj,), _same, _same, encoder.projection.bias)
    for index, layer in enumerate(bilm.lstm.layers):
        for d in range(2):
            prefix = f"RNN_{d}/RNN/MultiRNNCell/Cell{index}/LSTMCell"
            n_in, n_proj, n_gates = layer.input_dim, layer.projection_dim, 4 * layer.cell_dim
            kernel = (n_in + n_proj, n_gates)
            # TF multiplies [x, h_prev] by one kernel: input rows first, then recurrent rows. Our
            # layout is TF's ([in, out]), so the two halves are plain row slices.
            yield WeightEntry(f"{prefix}/W_0", kernel, lambda a, n=n_in: a[:n], None, layer.input_weight[d])
            yield WeightEntry(f"{prefix}/W_0", kernel, lambda a, n=n_in: a[n:], None, layer.state_weight[d])
            yield WeightEntry(f"{prefix}/B", (n_gates,), _same, _same, layer.input_bias[d])
            yield WeightEntry(f"{prefix}/W_P_0", (layer.cell_dim, n_proj), _same, _same, layer.projection_weight[d])


def _open(path: Union[str, Path], mode: str) -> h5py.File:
    return open_hdf5(path, "weights", WeightsError, mode)


def _dataset_names(f: h5py.File) -> List[str]:
    names: List[str] = []
    f.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
    return names


def read_arrays(
    datasets: Mapping[str, Any], path: Union[str, Path], entries: List[WeightEntry]
) -> Dict[int, np.ndarray]:
    """Each entry's value, as the torch layout wants it, from `datasets`: the weights file's arrays by
    bilm-tf's names (HDF5 datasets, or NumPy arrays from a safetensors file), each checked first."""
    arrays: Dict[int, np.ndarray] = {}
    unused = sorted(set(datasets) - {name for name, *_ in entries})
    if unused:
        shown = ", ".join(f"'{n}'" for n in unused[:6]) + (f" and {len(unused) - 6} more" if len(unused) > 6 else "")
        raise WeightsError(
            f"weights file {path} has datasets that the options do not use: {shown}. The options.json "
            "describes a smaller model (check lstm.n_layers and char_cnn.n_highway) or the file holds "
            "another model; loading it would silently give a different model"
        )
    for index, (name, shape, to_torch, _, target) in enumerate(entries):
        if name not in datasets:
            raise WeightsError(
                f"weights file {path} has no dataset '{name}', which the options require "
                f"(expected shape {shape}); are these the weights that go with these options?"
            )
        dataset = datasets[name]
        if tuple(dataset.shape) != shape:
            raise WeightsError(
                f"weights file {path}: dataset '{name}' has shape {tuple(dataset.shape)}, but the options require "
                f"{shape}; the weights and the options.json do not belong together"
            )
        value = np.ascontiguousarray(to_torch(read_float_array(dataset, path, name)))
        if tuple(value.shape) != tuple(target.shape):
            raise WeightsError(f"dataset '{name}' converts to {value.shape}, parameter needs {tuple(target.shape)}")
        arrays[index] = value
    return arrays


def load_weights(bilm: BiLM, path: Union[str, Path]) -> None:
    """Copy the weights in `path` (published layout) into `bilm`, checking every shape first."""
    entries = list(weight_entries(bilm))
    try:
        with _open(path, "r") as f:
            arrays = read_arrays({name: f[name] for name in _dataset_names(f)}, path, entries)
    except ElmoError:
        raise
    except HDF5_DAMAGE as err:
        raise WeightsError(
            f"weights file {path} is damaged: HDF5 cannot read its structure ({type(err).__name__}: {err}); fetch "
            "or copy the model again"
        ) from None
    copy_arrays(bilm, entries, arrays)


def copy_arrays(bilm: BiLM, entries: List[WeightEntry], arrays: Dict[int, np.ndarray]) -> None:
    """Fill `bilm`'s parameters from read_arrays' checked values."""
    with torch.no_grad():
        for index, (_, _, _, _, target) in enumerate(entries):
            target.copy_(torch.from_numpy(arrays[index]))
        bilm.char_encoder.char_embed.weight[0].zero_()
    bilm.clear_caches()


def stored_arrays(bilm: BiLM) -> Dict[str, np.ndarray]:
    """`bilm`'s weights as the published layout stores them: bilm-tf's names, float32 (no softmax)."""
    combined: Dict[str, np.ndarray] = {}
    kernels: Dict[str, list] = {}
    for name, _, _, to_stored, param in weight_entries(bilm):
        value = param.detach().cpu().numpy().astype(np.float32)
        if to_stored is None:  # the two halves of an LSTM kernel
            kernels.setdefault(name, []).append(value)
            continue
        combined[name] = np.ascontiguousarray(to_stored(value))
    for name, parts in kernels.items():
        combined[name] = np.concatenate(parts, axis=0)
    return combined


def save_weights(bilm: BiLM, path: Union[str, Path]) -> None:
    """Write `bilm`'s weights in the published layout (no softmax), readable by load_weights and by
    the original tools."""
    with _open(path, "w") as f:
        for name, value in stored_arrays(bilm).items():
            f.create_dataset(name, data=value)


def load_options_and_weights(options: Union[str, Path, ElmoOptions], weights: Union[str, Path, None]) -> BiLM:
    """A BiLM in eval mode from an options.json (or ElmoOptions) and its weights (random initialisation
    when `weights` is None)."""
    if not isinstance(options, ElmoOptions):
        options = ElmoOptions.from_file(options)
    bilm = BiLM(options)
    if weights is not None:
        load_weights(bilm, weights)
    return bilm.eval()


class BilmTfFormat(FormatDefaults):
    """bilm-tf / AllenNLP: an options JSON and a weights HDF5 (detect.py tells its files apart)."""

    def read_options(self, directory: Path, layout: ModelLayout) -> ElmoOptions:
        return ElmoOptions.from_file(directory / layout.files["options"])

    def load(self, directory: Path, layout: ModelLayout) -> BiLM:
        return load_options_and_weights(directory / layout.files["options"], directory / layout.files["weights"])


BILM_TF = BilmTfFormat()
