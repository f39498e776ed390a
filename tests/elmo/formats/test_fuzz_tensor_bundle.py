"""Damaged and crafted tensor bundles: flipped bytes in a data shard or the index, and index entries
written to lie (huge or overflowing shapes, sizes and offsets beyond the shard), give the reader's own
error naming the file, or the value TensorFlow saved; never another model or a raw library error."""

import random
import shutil
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_elmo.elmo.formats.tensor_bundle import TABLE_MAGIC, InputFileError, TensorBundle, crc32c
from tests.support.paths import FIXTURES

DTYPES = FIXTURES / "elmo-tfhub" / "dtypes"
EXPECTED = np.load(FIXTURES / "elmo-tfhub" / "dtypes.npz")
FLOAT32 = 1


def _mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1  # int64 fields are written as their two's complement, as protobuf does
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def _block(entries) -> bytes:
    body = b"".join(_varint(0) + _varint(len(k)) + _varint(len(v)) + k + v for k, v in entries)
    return body + struct.pack("<II", 0, 1)


def _table(entries) -> bytes:
    """An uncompressed LevelDB table holding `entries` (one data block), as TensorFlow writes an index."""
    data = _block(entries)
    out = data + b"\x00" + struct.pack("<I", _mask(crc32c(data + b"\x00")))
    index = _block([(entries[-1][0], _varint(0) + _varint(len(data)))])
    index_offset = len(out)
    out += index + b"\x00" + struct.pack("<I", _mask(crc32c(index + b"\x00")))
    handles = _varint(0) + _varint(0) + _varint(index_offset) + _varint(len(index))
    return out + handles.ljust(40, b"\x00") + struct.pack("<Q", TABLE_MAGIC)


def _entry(dtype: int, shape, offset: int, size: int, crc: int) -> bytes:
    dims = b"".join(b"\x12" + _varint(len(d)) + d for d in (b"\x08" + _varint(n) for n in shape))
    return (
        b"\x08" + _varint(dtype) + b"\x12" + _varint(len(dims)) + dims + b"\x18\x00"
        b"\x20" + _varint(offset) + b"\x28" + _varint(size) + b"\x35" + struct.pack("<I", crc)
    )


def _bundle(folder, entry: bytes, shard: bytes) -> TensorBundle:
    (folder / "variables.index").write_bytes(_table([(b"", b"\x08\x01"), (b"w", entry)]))
    (folder / "variables.data-00000-of-00001").write_bytes(shard)
    return TensorBundle(folder / "variables.index")


def test_the_writer_here_makes_bundles_the_reader_reads(tmp_path):
    value = np.arange(6, dtype="<f4").reshape(2, 3)
    raw = value.tobytes()
    bundle = _bundle(tmp_path, _entry(FLOAT32, (2, 3), 0, len(raw), _mask(crc32c(raw))), raw)
    np.testing.assert_array_equal(bundle.read("w"), value)


def test_a_changed_byte_in_a_data_shard_fails_the_tensor_checksum(tmp_path):
    copy = shutil.copytree(DTYPES, tmp_path / "variables")
    shard = copy / "variables.data-00000-of-00002"
    raw = bytearray(shard.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    shard.write_bytes(bytes(raw))
    bundle = TensorBundle(copy / "variables.index")
    with pytest.raises(InputFileError, match=r"variables\.data-00000-of-00002: the bytes of variable '\w+' fail"):
        for name in bundle.entries:
            if name != "string":
                bundle.read(name)


@pytest.mark.parametrize(
    "shape, size, message",
    [
        ((1_000_000, 1_000_000), 4 * 10**12, r"variables\.data-00000-of-00001 ends before variable 'w'"),
        ((1 << 32, 1 << 32), 0, r"variables\.index: variable 'w' claims 0 bytes .* the index is damaged"),
        ((-1, 4), -16, r"variables\.index: variable 'w' claims -16 bytes"),
    ],
)
def test_a_crafted_entry_is_refused_before_anything_is_allocated(tmp_path, shape, size, message):
    bundle = _bundle(tmp_path, _entry(FLOAT32, shape, 0, size, 0), b"\x00" * 64)
    with pytest.raises(InputFileError, match=message):
        bundle.read("w")


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    dtype=st.sampled_from([0, 1, 2, 3, 7, 9, 19, 200]),
    shape=st.lists(st.one_of(st.integers(-2, 9), st.integers(1 << 30, 1 << 63)), max_size=4),
    offset=st.one_of(st.integers(-4, 80), st.integers(1 << 40, 1 << 63)),
    size=st.one_of(st.integers(-4, 80), st.integers(1 << 40, 1 << 63)),
    crc=st.integers(0, 0xFFFFFFFF),
)
def test_any_crafted_entry_reads_correctly_or_fails_with_the_readers_error(
    tmp_path_factory, dtype, shape, offset, size, crc
):
    shard = bytes(range(64))
    folder = tmp_path_factory.mktemp("bundle")
    try:
        value = _bundle(folder, _entry(dtype, shape, offset, size, crc), shard).read("w")
    except InputFileError:
        return
    assert value.tobytes() == shard[offset : offset + size] and _mask(crc32c(value.tobytes())) == crc


def test_seeded_byte_flips_give_the_saved_values_or_the_readers_error(tmp_path):
    rng = random.Random(43)
    files = sorted(p.name for p in DTYPES.iterdir())
    outcomes = {"error": 0, "read": 0}
    for trial in range(300):
        folder = shutil.copytree(DTYPES, tmp_path / str(trial))
        target = folder / rng.choice(files)
        raw = bytearray(target.read_bytes())
        for _ in range(rng.randint(1, 3)):
            raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
        target.write_bytes(bytes(raw))
        try:
            bundle = TensorBundle(folder / "variables.index")
            for name in EXPECTED.files:
                np.testing.assert_array_equal(bundle.read(name), EXPECTED[name], err_msg=f"trial {trial}: {name}")
            outcomes["read"] += 1
        except InputFileError:
            outcomes["error"] += 1
        shutil.rmtree(folder)
    assert outcomes["error"] > 250  # nearly every flip lands in checksummed bytes
