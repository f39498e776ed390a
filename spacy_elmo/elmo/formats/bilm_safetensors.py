"""The bilm-tf layout in safetensors: an options.json and `model.safetensors`, whose tensors are the
weights HDF5's datasets under the same names (bilm-tf's), as `export` writes them for the Hugging Face
Hub. The same names mean one mapping onto the torch BiLM (bilm_tf.weight_entries) and the same checks
of every shape and value before anything is copied; safetensors holds tensors only, so reading a file
from elsewhere runs no code, and it is memory-mapped rather than parsed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Union

import numpy as np
import safetensors.numpy
import safetensors.torch
import torch
from safetensors import SafetensorError

from ..nn.bilm import BiLM
from ..nn.options import ElmoOptions
from .base import FormatDefaults
from .bilm_tf import copy_arrays, read_arrays, stored_arrays, weight_entries
from .detect import ModelLayout
from .errors import WeightsError

WEIGHTS_FILE = "model.safetensors"


def save_safetensors(bilm: BiLM, path: Union[str, Path]) -> None:
    """Write `bilm`'s weights as bilm-tf's datasets in one safetensors file (no softmax), into the file
    `path` as it is (save_file would make a file of its own, without the mode atomic_output gives)."""
    Path(path).write_bytes(safetensors.numpy.save(stored_arrays(bilm), metadata={"layout": "bilm-tf"}))


def _read(path: Path) -> Dict[str, np.ndarray]:
    """The file's tensors as NumPy arrays; bfloat16, which NumPy lacks, widened to float32 (exactly)."""
    try:
        tensors = safetensors.torch.load_file(str(path))
    except (SafetensorError, OSError) as err:
        raise WeightsError(
            f"weights file {path} is not a readable safetensors file ({err}); fetch or copy the model again"
        ) from None
    return {
        name: (tensor.float() if tensor.dtype == torch.bfloat16 else tensor).numpy() for name, tensor in tensors.items()
    }


def load_safetensors(bilm: BiLM, path: Union[str, Path]) -> None:
    """Copy the weights in the safetensors file `path` into `bilm`, checking every shape first."""
    entries = list(weight_entries(bilm))
    copy_arrays(bilm, entries, read_arrays(_read(Path(path)), path, entries))


class SafetensorsFormat(FormatDefaults):
    """An options.json and model.safetensors (detect.py), beside which a bilm-tf weights HDF5 may sit."""

    def read_options(self, directory: Path, layout: ModelLayout) -> ElmoOptions:
        return ElmoOptions.from_file(directory / layout.files["options"])

    def load(self, directory: Path, layout: ModelLayout) -> BiLM:
        bilm = BiLM(ElmoOptions.from_file(directory / layout.files["options"]))
        load_safetensors(bilm, directory / layout.files["weights"])
        return bilm.eval()


SAFETENSORS = SafetensorsFormat()
