"""HDF5 files the package reads or writes, checked where h5py would not: a file read must hold its
own data, and a file written must fail at the write that fails.

HDF5 lets a dataset keep its data elsewhere (external raw files, external links, virtual datasets):
such a file loads another file's bytes unseen, and a FIFO as that file hangs the read. A dataset may
also declare a shape its file cannot hold (never-written data reads as its fill value), so a tiny file
allocates hundreds of GiB. Both are refused when the file is opened, before any data is read.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import List, Tuple, Type, Union

import h5py
import numpy as np

from ..errors import InputFileError

# Deflate's largest ratio is about 1,032 to 1: a compressed dataset declaring more than this per byte
# of its file cannot be data the file stores.
MAX_COMPRESSION = 1032
LIBVERS = {"earliest": h5py.h5f.LIBVER_EARLIEST, "v110": h5py.h5f.LIBVER_V110, "latest": h5py.h5f.LIBVER_LATEST}


def check_self_contained(f: h5py.File, path: Union[str, Path], what: str, error: Type[InputFileError]) -> None:
    """An `error` naming the first link or dataset of `f` whose data is not inside the file, or that
    declares more data than the file can hold; reads no data and follows no link."""
    file_bytes = os.path.getsize(path)
    links: List[Tuple[str, object]] = []
    f.visititems_links(lambda name, link: links.append((name, link)))  # an error raised inside breaks h5py
    for name, link in links:
        _check_link(f, path, what, error, name, link, file_bytes)


def _check_link(
    f: h5py.File, path: Union[str, Path], what: str, error: Type[InputFileError], name: str, link: object, size: int
) -> None:
    if isinstance(link, h5py.ExternalLink):
        raise error(
            f"{what} file {path}: '{name}' is an external link to {link.filename}:{link.path}; the "
            f"{what} must be inside the file (rewrite it with the data copied in)"
        )
    if not isinstance(link, h5py.HardLink):
        return
    item = f.get(name)
    if not isinstance(item, h5py.Dataset):
        return
    plist = item.id.get_create_plist()
    if item.is_virtual:
        raise error(
            f"{what} file {path}: dataset '{name}' is a virtual dataset mapping other files; the {what} "
            "must be inside the file (rewrite it with the data copied in)"
        )
    if plist.get_external_count():
        raise error(
            f"{what} file {path}: dataset '{name}' keeps its data in the external file "
            f"{plist.get_external(0)[0].decode(errors='replace')!r}; the {what} must be inside the file "
            "(rewrite it with the data copied in)"
        )
    if item.shape is None or item.dtype.kind not in "biufc":
        return
    declared = math.prod(item.shape) * item.dtype.itemsize
    limit = size * (MAX_COMPRESSION if plist.get_nfilters() else 1)
    if declared > limit:
        raise error(
            f"{what} file {path}: dataset '{name}' declares shape {item.shape} of {np.dtype(item.dtype)} "
            f"({declared:,} bytes), more than its {size:,}-byte file can hold: it is damaged or "
            "crafted; use the published file"
        )


def create_hdf5(path: Union[str, Path], libver: Tuple[str, str] = ("earliest", "latest")) -> h5py.File:
    """A new HDF5 file at `path` whose writes reach the disk when made (no sieve buffer): HDF5 holds a
    small dataset's data until the dataset is closed, and a write failing then (a full disk) fails in
    h5py's finaliser, where it is only printed, so writing went on and the process crashed at exit.
    `libver`: the oldest and newest file format to write, as `h5py.File` names them (h5py's default)."""
    access = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    access.set_libver_bounds(*(LIBVERS[bound] for bound in libver))
    access.set_sieve_buf_size(0)
    return h5py.File(h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC, fapl=access))
