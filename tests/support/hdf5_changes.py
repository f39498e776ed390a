"""Datasets of an HDF5 file changed as a damaged, hand-edited or foreign file has them: another dtype,
another shape, a group or nothing in their place, non-finite values. The fuzz suite applies them to
weights and softmax files; `LOADABLE` ones keep the file valid (other float widths, large finite values)."""

from typing import Callable, Dict

import h5py
import numpy as np


def _replaced(make: Callable[[np.ndarray], object]) -> Callable[[h5py.File, str], None]:
    def change(f: h5py.File, name: str) -> None:
        value = f[name][()]
        del f[name]
        f[name] = make(value)

    return change


def _with_first(number: float, dtype: str) -> Callable[[np.ndarray], np.ndarray]:
    def make(value: np.ndarray) -> np.ndarray:
        changed = value.astype(dtype)
        changed.flat[0] = number
        return changed

    return make


def _group(f: h5py.File, name: str) -> None:
    del f[name]
    f.create_group(name)


def _missing(f: h5py.File, name: str) -> None:
    del f[name]


def _extra(f: h5py.File, name: str) -> None:
    f[f"{name}_extra"] = f[name][()]


def _empty(f: h5py.File, name: str) -> None:
    del f[name]
    f.create_dataset(name, data=h5py.Empty("f4"))


def _vlen(f: h5py.File, name: str) -> None:
    shape = f[name].shape
    del f[name]
    f.create_dataset(name, shape=shape, dtype=h5py.vlen_dtype("f4"))


CHANGES: Dict[str, Callable[[h5py.File, str], None]] = {
    "float16": _replaced(lambda v: v.astype("f2")),
    "float64": _replaced(lambda v: v.astype("f8")),
    "near float32's limit": _replaced(_with_first(3e38, "f4")),
    "int32": _replaced(lambda v: (v * 100).astype("i4")),
    "bool": _replaced(lambda v: v > 0),
    "complex": _replaced(lambda v: v.astype("c8")),
    "strings": _replaced(lambda v: v.astype(str).astype("S")),
    "compound": _replaced(lambda v: np.zeros(v.shape, dtype=[("a", "f4")])),
    "NaN": _replaced(_with_first(np.nan, "f4")),
    "beyond float32": _replaced(_with_first(1e300, "f8")),
    "one more row": _replaced(lambda v: np.concatenate([v, v[:1]])),
    "flattened": _replaced(lambda v: v.reshape(-1)[:-1]),
    "scalar": _replaced(lambda v: np.float32(1)),
    "empty": _empty,
    "variable-length": _vlen,
    "a group": _group,
    "missing": _missing,
    "an extra dataset": _extra,
}
# The changes after which the file still holds the model's weights (rounded, or large but finite).
LOADABLE = {"float16", "float64", "near float32's limit"}
