"""Cross-lingual alignment of the pooled vectors (Schuster et al., NAACL 2019): each language's biLM was
trained on its own, and a published matrix `W` per language maps its vectors into English's space,
`v -> W v`, so that German "Bank" and English "bank" land near each other and a head trained on English
runs on German. The matrices ship beside the weights as `alignment.pth` (catalogue models
`schuster-aligned-*`); they were fitted on the first LSTM layer, so pooling `[0, 1, 0]` (that layer
alone) is the published setting, and any fixed pooling is mapped by the same `W` since the map is linear.

The matrix is a NumPy array or tensor saved by `torch.save`, in any float type (float16, bfloat16,
float32, float64; a parameter, one with `requires_grad`, a sparse one); it is read with
`weights_only=True`, with NumPy's array reconstruction the only globals allowed, so a crafted file cannot
run code. Its shape is checked before anything is materialized (a saved tensor can be a stride-0 view of
one number, as wide as it likes), and it is checked finite after the cast to float32, whose range is
smaller than float64's.

torch's reader checks no checksum: a file in torch's zip format (torch 1.6 and later) has its members'
CRC-32s checked here first, so a changed byte in the matrix is refused instead of read; the older format
(the published matrices') records none. Whatever fails to decode, in torch's unpickler or its zip reader,
gives AlignmentError: damaged bytes raise many kinds of error there.
"""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path
from typing import Any, Callable, List, Tuple, cast

import numpy as np
import torch
from thinc.api import Model, chain
from thinc.types import Floats2d, Floats3d

from ...elmo.nn.pooling_weights import PoolingWeights
from ...elmo.sources.resolver import model_reference, resolve
from ...elmo.util.validation import non_finite_float32
from ..errors import AlignmentError
from .pooling import build_pooling_v1
from .read_rows import ROW_WISE

ALIGNMENT_FILE = "alignment.pth"

# What a pickled NumPy array refers to (found through pickling itself, whatever NumPy's module layout);
# files saved under NumPy 1 name the reconstructor `numpy.core.multiarray`.
_reconstruct = np.zeros(0).__reduce__()[0]
_FLOAT_TYPES = (np.float16, np.float32, np.float64, np.longdouble)
_NUMPY_GLOBALS: List[Any] = [
    _reconstruct,
    (_reconstruct, "numpy.core.multiarray._reconstruct"),
    np.ndarray,
    np.dtype,
    *{type(np.dtype(t)) for t in _FLOAT_TYPES},
]
_ZIP_MAGIC = b"PK\x03\x04"
# The widest matrix read: the published ones map 1024-wide vectors; a wider one is refused before it is
# materialized (8192 x 8192 float32 is 256 MiB).
MAX_WIDTH = 8192


def alignment_path(reference: str) -> Path:
    """The matrix file `reference` names: the file itself, a model directory holding `alignment.pth`, or
    a downloaded catalogue model's name (a name not downloaded fails with the download command)."""
    path = Path(reference)
    if not path.exists():
        path = resolve(model_reference(name=reference)).model_path()
    if path.is_dir():
        path = path / ALIGNMENT_FILE
    if not path.is_file():
        raise AlignmentError(
            f"alignment {reference!r}: {path} does not exist. Give a torch-saved matrix file, or a model that "
            f"ships one as {ALIGNMENT_FILE} (the schuster-aligned-* models of `python -m spacy_elmo models`)"
        )
    return path


def read_alignment(reference: str) -> Floats2d:
    """The square float32 matrix `W` of `reference` (see `alignment_path`)."""
    path = alignment_path(reference)
    if not hasattr(torch.serialization, "safe_globals"):
        raise AlignmentError(f"reading {path} needs torch 2.5 or later (torch.serialization.safe_globals)")
    # torch's unpickler and readers raise a dozen kinds of error on damaged bytes (IndexError, LookupError,
    # AssertionError, struct.error, ...): whatever they raise, the file does not decode.
    try:
        _check_crcs(path)
        with torch.serialization.safe_globals(_NUMPY_GLOBALS), warnings.catch_warnings():
            # a changed protocol byte makes torch ask the reader to file an issue with torch
            warnings.filterwarnings("ignore", message="Detected pickle protocol")
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise AlignmentError(
            f"{path} is not an alignment matrix saved by torch.save (a NumPy array or tensor): {first_line}. "
            "Download the model again with --force, or save the matrix again with torch.save"
        ) from None
    return _float32_matrix(data, path)


def _check_crcs(path: Path) -> None:
    """Every member of a zip-format file matches the CRC-32 torch.save recorded for it (0: none recorded,
    torch.serialization.set_crc32_options(False)); zipfile raises BadZipFile where one does not."""
    with open(path, "rb") as file:
        if file.read(4) != _ZIP_MAGIC:  # torch's test of its format; the older one starts with a pickle
            return
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.CRC or not info.file_size:
                with archive.open(info) as member:
                    while member.read(1 << 20):
                        pass


def _float32_matrix(data: Any, path: Path) -> Floats2d:
    """`data` (a tensor, dense or sparse, or a NumPy array) as a new float32 array, its shape checked
    before it is materialized and its values after the cast."""
    if isinstance(data, torch.Tensor):
        shape, dtype, floating = tuple(data.shape), str(data.dtype), data.is_floating_point()
    elif isinstance(data, np.ndarray):
        shape, dtype, floating = data.shape, str(data.dtype), np.issubdtype(data.dtype, np.floating)
    else:
        raise AlignmentError(f"{path} holds a {type(data).__name__}, not a matrix: save the matrix itself")
    if len(shape) != 2 or shape[0] != shape[1] or not floating:
        raise AlignmentError(f"{path} holds a {dtype} array of shape {shape}, not a square float matrix")
    if shape[0] > MAX_WIDTH:
        raise AlignmentError(
            f"{path} holds a {shape[0]} x {shape[1]} matrix; an alignment maps the biLM's vectors, at most "
            f"{MAX_WIDTH} wide: use the alignment published with the model"
        )
    if isinstance(data, torch.Tensor):
        dense = data.detach().to_dense() if data.layout != torch.strided else data.detach()
        matrix = dense.to(torch.float32).contiguous().numpy().copy()
    else:
        matrix = np.ascontiguousarray(data, dtype=np.float32).copy()
    if non_finite_float32(matrix):
        raise AlignmentError(
            f"{path} holds NaN or infinite values (or values beyond float32's range, +-3.4e38); "
            "download the model again with --force"
        )
    return cast(Floats2d, matrix)


def build_aligned_pooling_v1(alignment: str, weights: PoolingWeights = "mean") -> Model[List[Floats3d], List[Floats2d]]:
    """`spacy-elmo.AlignedPooling.v1`: fixed pooling, then a published cross-lingual alignment (Schuster
    et al. 2019): every token vector `v` becomes `W v`, in English's space, so that vectors of several
    languages' models compare. Give it as the `elmo` component's `pooling`.

    alignment (str): the matrix: a downloaded catalogue model's name (`schuster-aligned-de`), a model
        directory holding `alignment.pth`, or a torch-saved `[D, D]` matrix file. Read at
        `nlp.initialize()` or first use, and saved with the pipeline (the `elmo` component keeps its
        pooling layer), so a saved pipeline loads where the alignment file is not.
    weights (Union[str, Sequence[float]]): the pooling before the alignment, as in `spacy-elmo.Pooling.v1`;
        `[0, 1, 0]` (the first LSTM layer, which the published matrices were fitted on) is the paper's.
    RETURNS (Model[List[Floats3d], List[Floats2d]]): each doc's layers -> one aligned vector per token.
    """
    align: Model[List[Floats2d], List[Floats2d]] = Model(
        "elmo-alignment", _forward, init=_init, params={"W": None}, attrs={"source": str(alignment)}
    )
    model: Model[List[Floats3d], List[Floats2d]] = chain(build_pooling_v1(weights), align)
    model.attrs[ROW_WISE] = True  # row i of the output depends on row i of the input alone
    return model


def _init(model: Model, X: Any = None, Y: Any = None) -> None:
    if not model.has_param("W"):
        model.set_param("W", read_alignment(model.attrs["source"]))


def _forward(model: Model, Xs: List[Floats2d], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    _init(model)
    W = cast(Floats2d, model.get_param("W"))
    for X in Xs:
        if X.shape[1] != W.shape[1]:
            raise AlignmentError(
                f"alignment {model.attrs['source']} maps {W.shape[1]}-wide vectors but this biLM gives "
                f"{X.shape[1]}-wide ones: use the alignment published with the model"
            )
    Ys = [model.ops.xp.ascontiguousarray(X @ W.T) for X in Xs]

    def backprop(dYs: List[Floats2d]) -> List[Floats2d]:
        return [dY @ W for dY in dYs]

    return Ys, backprop
