"""Reading the user's files with errors that name them, writing files that are never half-written,
and cheap file statistics."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator, Type, Union

import h5py

from .errors import InputFileError


@contextlib.contextmanager
def atomic_output(path: Union[str, Path]) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` only if the block finishes.

    A crash or kill mid-write leaves at most a stray `.tmp` file, never a corrupt `path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def count_lines(path: Union[str, Path]) -> int:
    """Number of lines, counted on raw bytes (fast; used for progress bars)."""
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def check_input_file(path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError) -> Path:
    """`path` as a Path if it names an existing regular file; else `error` (an InputFileError) saying why."""
    if str(path).strip() in ("", "."):
        raise error(f"no {what} file given (the path is empty)")
    path = Path(path)
    if not path.exists():
        raise error(f"{what} file {path} does not exist")
    if path.is_dir():
        raise error(f"{what} file {path} is a directory; give the file inside it")
    return path


def _not_utf8(
    path: Path, what: str, err: UnicodeDecodeError, error: Type[InputFileError], line: int = 0
) -> InputFileError:
    where = f"line {line}" if line else f"byte {err.start}"
    return error(
        f"{what} file {path} is not UTF-8 text ({err.reason} at {where}); is it the right "
        "file? Convert text to UTF-8 first (e.g. iconv -t utf-8)"
    )


def read_text(path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError) -> str:
    """The whole file as UTF-8 text."""
    path = check_input_file(path, what, error)
    try:
        return path.read_text(encoding="utf8")
    except UnicodeDecodeError as err:
        raise _not_utf8(path, what, err, error) from None
    except OSError as err:
        raise error(f"{what} file {path} cannot be read: {err.strerror}") from None


def text_lines(path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError) -> Iterator[str]:
    """The file's lines as UTF-8 text, streamed; a bad byte is an InputFileError naming the line."""
    path = check_input_file(path, what, error)
    lines_read = 0
    try:
        with open(path, encoding="utf8") as f:
            for line in f:
                yield line
                lines_read += 1
    except UnicodeDecodeError as err:
        raise _not_utf8(path, what, err, error, lines_read + 1) from None


def open_hdf5(
    path: Union[str, Path], what: str, error: Type[InputFileError] = InputFileError, mode: str = "r"
) -> h5py.File:
    """An HDF5 file, or an InputFileError for a missing, truncated or non-HDF5 file."""
    if mode == "r":
        path = check_input_file(path, what, error)
    try:
        return h5py.File(path, mode)
    except OSError as err:
        raise error(f"{what} file {path} is not a readable HDF5 file (truncated or another format?): {err}") from None
