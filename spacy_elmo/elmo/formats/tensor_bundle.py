"""TensorFlow's tensor-bundle checkpoint (`variables/variables.index` + `variables.data-NNNNN-of-MMMMM`),
read without TensorFlow.

Parsed by hand, because no light, maintained package reads it: the PyPI LevelDB bindings open whole
databases (a MANIFEST and logs), not one table file, and TensorFlow's own reader brings TensorFlow. The
format is small:
- the index is one SSTable in LevelDB's table format: a 48-byte footer (two block handles, padding, a
  magic number), an index block whose values are the handles of data blocks, and data blocks of
  prefix-compressed key/value entries, each block followed by a type byte (0 raw, 1 snappy) and a masked
  CRC32C. TensorFlow writes the bundle's table uncompressed; a snappy block is refused by name;
- key "" holds a BundleHeaderProto (number of shards, endianness), every other key, a variable's name,
  a BundleEntryProto (dtype, shape, shard, offset, size, CRC32C of the bytes);
- shard k's raw little-endian bytes are in `PREFIX.data-{k:05d}-of-{n:05d}`.
The protobuf messages are read field by field (varints and length-delimited fields); only the fields
above are used and unknown fields are skipped, as protobuf does. Block checksums and every tensor's
masked CRC32C are verified (google-crc32c, a compiled CRC: a damaged index or data shard fails with its
file's name instead of loading as another model), and an entry's shape, size and offset are checked
against each other and the shard's length before anything is allocated, so a crafted index cannot ask
for more memory than the file holds.
"""

from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, Optional, Tuple, Union

import google_crc32c
import numpy as np

from .errors import InputFileError

TABLE_MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
BLOCK_TRAILER_SIZE = 5

# TensorFlow's DataType enum (types.proto) -> NumPy; bfloat16 and strings are not ELMo weights.
DTYPES: Dict[int, np.dtype] = {
    1: np.dtype("<f4"),
    2: np.dtype("<f8"),
    3: np.dtype("<i4"),
    4: np.dtype("u1"),
    5: np.dtype("<i2"),
    6: np.dtype("i1"),
    9: np.dtype("<i8"),
    10: np.dtype("?"),
    19: np.dtype("<f2"),
}


@dataclass(frozen=True)
class BundleEntry:
    """Where one variable's bytes are: `dtype` is TensorFlow's DataType number."""

    name: str
    dtype: int
    shape: Tuple[int, ...]
    shard: int
    offset: int
    size: int
    crc32c: Optional[int] = None


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as LevelDB checksums its blocks and TensorFlow its tensors."""
    return int(google_crc32c.value(data))


def _unmask(masked: int) -> int:
    rot = (masked - 0xA282EAD8) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


class _Damaged(Exception):
    """Raised inside the parsers; turned into a InputFileError naming the file."""


def _varint(data: bytes, pos: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _Damaged("a varint runs past its data")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(message: bytes) -> Iterator[Tuple[int, int, Union[int, bytes]]]:
    """(field number, wire type, value) of a protobuf message; values of varint fields are ints,
    length-delimited fields bytes, fixed-size fields their little-endian int."""
    pos = 0
    while pos < len(message):
        key, pos = _varint(message, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(message, pos)
            yield number, wire, value
        elif wire == 2:
            length, pos = _varint(message, pos)
            if pos + length > len(message):
                raise _Damaged("a protobuf field runs past its message")
            yield number, wire, message[pos : pos + length]
            pos += length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if pos + width > len(message):
                raise _Damaged("a protobuf field runs past its message")
            yield number, wire, int.from_bytes(message[pos : pos + width], "little")
            pos += width
        else:
            raise _Damaged(f"protobuf wire type {wire} is not a valid field")


def _signed(value: int) -> int:
    """A varint-encoded int64 (two's complement over 64 bits)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _shape(message: bytes) -> Tuple[int, ...]:
    dims = []
    for number, _wire, value in _fields(message):
        if number == 2 and isinstance(value, bytes):
            size = 0
            for dim_number, _, dim_value in _fields(value):
                if dim_number == 1 and isinstance(dim_value, int):
                    size = _signed(dim_value)
            dims.append(size)
        elif number == 3 and value:
            raise _Damaged("a shape of unknown rank")
    return tuple(dims)


def _entry(name: str, message: bytes) -> BundleEntry:
    values: Dict[int, Union[int, bytes]] = {}
    for number, _wire, value in _fields(message):
        if number == 7:
            raise _Damaged(f"variable '{name}' is stored in slices (a partitioned variable), which is not supported")
        values[number] = value
    shape = values.get(2, b"")
    ints = {k: v for k, v in values.items() if isinstance(v, int)}
    return BundleEntry(
        name=name,
        dtype=ints.get(1, 0),
        shape=_shape(shape) if isinstance(shape, bytes) else (),
        shard=ints.get(3, 0),
        offset=_signed(ints.get(4, 0)),
        size=_signed(ints.get(5, 0)),
        crc32c=ints.get(6),
    )


def _block(data: bytes, handle: Tuple[int, int]) -> bytes:
    offset, size = handle
    end = offset + size + BLOCK_TRAILER_SIZE
    if end > len(data):
        raise _Damaged("a block runs past the end of the file (truncated?)")
    contents, kind = data[offset : offset + size], data[offset + size]
    (stored,) = struct.unpack_from("<I", data, offset + size + 1)
    if _unmask(stored) != crc32c(data[offset : offset + size + 1]):
        raise _Damaged(f"the block at byte {offset} fails its checksum")
    if kind != 0:
        raise _Damaged(f"the block at byte {offset} is compressed (type {kind}); only uncompressed tables are read")
    return contents


def _block_entries(block: bytes) -> Iterator[Tuple[bytes, bytes]]:
    if len(block) < 4:
        raise _Damaged("a block is too short")
    (n_restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 - 4 * n_restarts
    if limit < 0:
        raise _Damaged("a block's restart array does not fit")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = _varint(block, pos)
        unshared, pos = _varint(block, pos)
        value_length, pos = _varint(block, pos)
        if shared > len(key) or pos + unshared + value_length > limit:
            raise _Damaged("a block entry runs past its block")
        key = key[:shared] + block[pos : pos + unshared]
        pos += unshared
        yield key, block[pos : pos + value_length]
        pos += value_length


def _handle(value: bytes, pos: int = 0) -> Tuple[Tuple[int, int], int]:
    offset, pos = _varint(value, pos)
    size, pos = _varint(value, pos)
    return (offset, size), pos


def _table(data: bytes) -> Iterator[Tuple[bytes, bytes]]:
    if len(data) < FOOTER_SIZE:
        raise _Damaged("the file is shorter than a table's footer")
    footer = data[-FOOTER_SIZE:]
    if int.from_bytes(footer[-8:], "little") != TABLE_MAGIC:
        raise _Damaged("the file does not end with the table format's magic number")
    _, pos = _handle(footer)
    index_handle, _ = _handle(footer, pos)
    for _, value in _block_entries(_block(data, index_handle)):
        yield from _block_entries(_block(data, _handle(value)[0]))


class TensorBundle:
    """The variables of the checkpoint whose index is `index_path` (`.../variables.index`)."""

    def __init__(self, index_path: Union[str, Path]) -> None:
        self.index_path = Path(index_path)
        try:
            data = self.index_path.read_bytes()
        except FileNotFoundError:
            raise InputFileError(f"checkpoint index {self.index_path} does not exist") from None
        except OSError as err:
            raise InputFileError(f"checkpoint index {self.index_path} cannot be read: {err}") from None
        self.entries: Dict[str, BundleEntry] = {}
        try:
            header = None
            for key, value in _table(data):
                if key == b"":
                    header = dict((n, v) for n, _, v in _fields(value))
                else:
                    name = key.decode("utf8", errors="replace")
                    self.entries[name] = _entry(name, value)
        except _Damaged as err:
            raise InputFileError(
                f"checkpoint index {self.index_path} is damaged or not a tensor-bundle index: {err}; fetch the "
                "model again"
            ) from None
        if header is None:
            raise InputFileError(f"checkpoint index {self.index_path} has no bundle header; fetch the model again")
        if header.get(2, 0) != 0:
            raise InputFileError(f"checkpoint {self.index_path} is big-endian, which is not supported")
        n_shards = header.get(1, 1)
        self.n_shards = n_shards if isinstance(n_shards, int) and n_shards > 0 else 1

    def shard_path(self, shard: int) -> Path:
        prefix = self.index_path.name[: -len(".index")] if self.index_path.name.endswith(".index") else "variables"
        return self.index_path.with_name(f"{prefix}.data-{shard:05d}-of-{self.n_shards:05d}")

    def read(self, name: str) -> np.ndarray:
        """The value of variable `name` (KeyError if the bundle has none)."""
        entry = self.entries[name]
        dtype = DTYPES.get(entry.dtype)
        if dtype is None:
            raise InputFileError(
                f"checkpoint {self.index_path}: variable '{name}' has TensorFlow dtype number {entry.dtype}, "
                f"which this reader does not read (it reads {', '.join(str(d) for d in DTYPES.values())})"
            )
        self._check_entry(entry, dtype)
        path = self.shard_path(entry.shard)
        try:
            with open(path, "rb") as f:
                length = os.fstat(f.fileno()).st_size
                if entry.offset + entry.size > length:
                    raise InputFileError(
                        f"checkpoint data file {path} ends before variable '{name}' (it holds {length} bytes, the "
                        f"index {self.index_path.name} puts the variable at bytes {entry.offset}-"
                        f"{entry.offset + entry.size}): truncated, or the index is damaged; fetch the model again"
                    )
                f.seek(entry.offset)
                raw = f.read(entry.size)
        except FileNotFoundError:
            raise InputFileError(
                f"checkpoint data file {path} does not exist (the index {self.index_path.name} names "
                f"{self.n_shards} shard(s)); copy every variables.data-* file of the model"
            ) from None
        except OSError as err:
            raise InputFileError(f"checkpoint data file {path} cannot be read: {err}") from None
        if len(raw) != entry.size:
            raise InputFileError(
                f"checkpoint data file {path} ends before variable '{name}' (truncated?); fetch the model again"
            )
        if entry.crc32c is None or _unmask(entry.crc32c) != crc32c(raw):
            raise InputFileError(
                f"checkpoint data file {path}: the bytes of variable '{name}' fail the checksum the index "
                f"{self.index_path.name} records for them (the file is damaged); fetch the model again"
            )
        return np.frombuffer(raw, dtype=dtype).reshape(entry.shape).copy()

    def _check_entry(self, entry: BundleEntry, dtype: np.dtype) -> None:
        """Shape, size, offset and shard agree (in Python's unbounded ints, so an element count beyond
        int64 cannot wrap round to a plausible size)."""
        count = math.prod(entry.shape) if all(dim >= 0 for dim in entry.shape) else -1
        if (
            count < 0
            or entry.size != count * dtype.itemsize
            or entry.offset < 0
            or not 0 <= entry.shard < self.n_shards
        ):
            raise InputFileError(
                f"checkpoint index {self.index_path}: variable '{entry.name}' claims {entry.size} bytes at byte "
                f"{entry.offset} of shard {entry.shard} of {self.n_shards} for shape {entry.shape}; the index is "
                "damaged, fetch the model again"
            )
