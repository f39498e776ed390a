"""What every model format's reader provides (its files are told apart in detect.py, which names it):
reading its sizes cheaply, loading it, and what a saved spaCy pipeline must carry to rebuild it besides
the options and the parameters. And what the formats'
readers share: the typed list of stored arrays a reader fills parameters from (`WeightEntry`), the
checks that refuse non-float and non-finite weights, and the `describe`/`rebuild` of a format that needs nothing
beyond the options (`FormatDefaults`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, NamedTuple, Optional, Protocol, Tuple, Union

import numpy as np
import torch

from ..nn.bilm import BiLM
from ..nn.options import ElmoOptions
from ..util.validation import non_finite_float32
from .detect import ModelLayout
from .errors import WeightsError


class ModelFormat(Protocol):
    """The reader of one published ELMo format. `description_key` is the key a saved pipeline keeps
    `describe`'s output under (None: the format needs nothing beyond the options)."""

    description_key: Optional[str]

    def read_options(self, directory: Path, layout: ModelLayout) -> ElmoOptions:
        """The model's sizes from its small files only (no weights are read)."""

    def load(self, directory: Path, layout: ModelLayout) -> BiLM:
        """The model, weights loaded and checked, in eval mode."""

    def describe(self, bilm: BiLM) -> Optional[Dict[str, Any]]:
        """What rebuilds `bilm` besides its options and parameters; None when `bilm` is not of this
        format or needs nothing more."""

    def rebuild(self, options: ElmoOptions, description: Dict[str, Any]) -> BiLM:
        """An untrained BiLM of this format from `describe`'s output (parameters are loaded afterwards)."""


class WeightEntry(NamedTuple):
    """One stored array and the parameter it fills. `to_model` turns the stored array (NumPy from HDF5
    and tensor bundles, torch from ELMoForManyLangs' .pkl) into the parameter's layout; `to_stored` is
    the way back for a format that writes files, None where it reads only or the entry is one half of a
    stored array (the two row blocks of an LSTM kernel)."""

    key: str
    shape: Tuple[int, ...]
    to_model: Callable[[Any], Any]
    to_stored: Optional[Callable[[Any], Any]]
    target: torch.Tensor


def check_finite(value: np.ndarray, path: Union[str, Path], name: str) -> None:
    """NaN or infinite weights make every vector NaN (and spacy train then fail far from the cause)."""
    bad = non_finite_float32(value)
    if bad:
        raise WeightsError(
            f"weights file {path}: dataset '{name}' has {bad} NaN or infinite value(s) of {value.size} (or "
            "values beyond float32's range); the weights are broken, e.g. from a diverged training run"
        )


def read_float_array(stored: Any, path: Union[str, Path], name: str) -> np.ndarray:
    """A stored array of weights (an HDF5 dataset or a NumPy array) as float32; refused unless it holds
    finite floating-point numbers: strings, integers or complex numbers would convert without a word."""
    if stored.dtype.kind != "f":
        raise WeightsError(
            f"weights file {path}: dataset '{name}' holds {stored.dtype} values, not floating-point "
            "numbers; weights are float32 (or float16/float64) arrays, so this file holds something else"
        )
    try:
        value = stored[()]
    except OSError as err:
        raise WeightsError(
            f"weights file {path}: dataset '{name}' cannot be read ({err}); the file is probably truncated"
        ) from None
    with np.errstate(over="ignore"):  # float64 beyond float32's range becomes inf, refused below
        converted = np.asarray(value, dtype=np.float32)
    check_finite(converted, path, name)
    return converted


class FormatDefaults:
    """`describe` and `rebuild` of a format whose models are plain BiLMs: nothing to carry besides the
    options and the parameters."""

    description_key: Optional[str] = None

    def describe(self, bilm: BiLM) -> Optional[Dict[str, Any]]:
        return None

    def rebuild(self, options: ElmoOptions, description: Dict[str, Any]) -> BiLM:
        return BiLM(options)
