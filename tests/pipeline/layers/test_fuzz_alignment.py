"""Fuzzing alignment files (`spacy-elmo.AlignedPooling.v1`'s matrices, layers/alignment.py): changed, cut
and random bytes give AlignmentError naming the file, or a matrix. A file in torch's zip format has
CRC-32s, so its matrix is the one saved; the older format, the published matrices', has none, so a
changed value reads as it is, but always as a square, finite float32 matrix."""

import io
import random

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spacy_elmo.pipeline.errors import AlignmentError
from spacy_elmo.pipeline.layers.alignment import MAX_WIDTH, read_alignment
from tests.support.fuzz import Damage, damages, fuzz_settings

W = np.arange(16, dtype=np.float32).reshape(4, 4) / 8


def _saved(value, zip_format: bool = True) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer, _use_new_zipfile_serialization=zip_format)
    return buffer.getvalue()


SAVED = {
    "numpy": (_saved(W), True),
    "tensor": (_saved(torch.from_numpy(W)), True),
    "legacy_numpy": (_saved(W, zip_format=False), False),
    "legacy_tensor": (_saved(torch.from_numpy(W), zip_format=False), False),
}


def _read_as_saved_or_refused(path, form: str, damage: Damage) -> None:
    """The property: AlignmentError naming the file, else the saved matrix (a zip-format file) or a
    square, finite float32 matrix (the older format, which has no checksum)."""
    original, checked = SAVED[form]
    path.write_bytes(damage.apply(original))
    try:
        matrix = read_alignment(str(path))
    except AlignmentError as err:
        assert str(path) in str(err)
        return
    if checked:
        np.testing.assert_array_equal(matrix, W)
    assert matrix.dtype == np.float32 and matrix.ndim == 2 and matrix.shape[0] == matrix.shape[1] <= MAX_WIDTH
    assert np.isfinite(matrix).all()


FORMS = st.sampled_from(sorted(SAVED))
# Found by long runs: a changed encoding name (torch's unpickler raised LookupError), a changed storage
# key (torch raised AssertionError).
FOUND = [
    dict(form="legacy_numpy", damage=Damage(changes=((1935, 1),))),
    dict(form="legacy_tensor", damage=Damage(changes=((595567, 1),))),
]


def _with_found(test):
    for found in FOUND:
        test = example(**found)(test)
    return test


@settings(fuzz_settings(slow=False), max_examples=40)  # cheap examples: more of them
@given(form=FORMS, damage=damages())
@_with_found
def test_a_damaged_alignment_file_reads_as_saved_or_is_refused(tmp_path, form, damage):
    _read_as_saved_or_refused(tmp_path / "alignment.pth", form, damage)


@pytest.mark.slow
@fuzz_settings(slow=True)
@given(form=FORMS, damage=damages())
@_with_found
def test_a_damaged_alignment_file_reads_as_saved_or_is_refused_long_run(tmp_path, form, damage):
    _read_as_saved_or_refused(tmp_path / "alignment.pth", form, damage)


def test_random_4_kib_files_are_refused(tmp_path):
    """Of 400 such files, 26 once raised torch's unpickler's IndexError or KeyError."""
    rng = random.Random(0)
    path = tmp_path / "alignment.pth"
    for _ in range(400):
        path.write_bytes(rng.randbytes(4096))
        with pytest.raises(AlignmentError, match="not an alignment matrix .* save the matrix again"):
            read_alignment(str(path))


def test_a_changed_value_in_a_zip_format_file_fails_its_crc(tmp_path):
    """torch's reader checks no CRC-32: the changed matrix read without a word."""
    data = bytearray(SAVED["tensor"][0])
    data[data.index(W.tobytes()) + 5] ^= 1
    (tmp_path / "alignment.pth").write_bytes(bytes(data))
    with pytest.raises(AlignmentError, match="Bad CRC-32"):
        read_alignment(str(tmp_path / "alignment.pth"))
