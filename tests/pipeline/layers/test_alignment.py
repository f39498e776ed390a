"""Alignment matrices in every float form a user would save: converted to float32, checked after the cast,
and refused by their shape before anything is materialized."""

import numpy as np
import pytest
import torch

from spacy_elmo.pipeline.errors import AlignmentError
from spacy_elmo.pipeline.layers.alignment import MAX_WIDTH, read_alignment

W = np.arange(16, dtype=np.float64).reshape(4, 4) / 8  # exact in every float type below


def _saved(tmp_path, value):
    path = tmp_path / "alignment.pth"
    torch.save(value, path)
    return str(path)


@pytest.mark.parametrize(
    "form",
    [
        pytest.param(lambda: torch.tensor(W, dtype=torch.float64), id="float64"),
        pytest.param(lambda: torch.tensor(W, dtype=torch.float16), id="float16"),
        pytest.param(lambda: torch.tensor(W, dtype=torch.bfloat16), id="bfloat16"),
        pytest.param(lambda: torch.tensor(W, dtype=torch.float32, requires_grad=True), id="requires_grad"),
        pytest.param(lambda: torch.nn.Parameter(torch.tensor(W, dtype=torch.float32)), id="parameter"),
        pytest.param(lambda: torch.tensor(W, dtype=torch.float32).to_sparse(), id="sparse_coo"),
        pytest.param(lambda: torch.tensor(W, dtype=torch.float32).to_sparse_csr(), id="sparse_csr"),
        pytest.param(lambda: torch.tensor(W, dtype=torch.float32).t(), id="transposed_view"),
        pytest.param(lambda: W, id="numpy_float64"),
        pytest.param(lambda: W.astype(np.float16), id="numpy_float16"),
        pytest.param(lambda: np.asfortranarray(W.astype(np.float32)), id="numpy_fortran"),
    ],
)
def test_every_float_form_reads_as_the_same_float32_matrix(tmp_path, form):
    value = form()
    expected = np.asarray(
        value.detach().to_dense().to(torch.float64) if isinstance(value, torch.Tensor) else value, dtype=np.float32
    )
    matrix = read_alignment(_saved(tmp_path, value))
    assert matrix.dtype == np.float32 and matrix.flags.c_contiguous and matrix.flags.writeable
    np.testing.assert_array_equal(matrix, expected)


@pytest.mark.parametrize("value", [torch.full((3, 3), 1e39, dtype=torch.float64), np.full((3, 3), -1e39)])
def test_values_beyond_float32s_range_are_refused_after_the_cast(tmp_path, value):
    with pytest.raises(AlignmentError, match="beyond float32's range"):
        read_alignment(_saved(tmp_path, value))


def test_a_stride_0_expand_too_wide_is_refused_before_it_is_materialized(tmp_path):
    side = 100_000
    huge = torch.ones(1, dtype=torch.float32).expand(side, side)
    path = _saved(tmp_path, huge)
    assert (tmp_path / "alignment.pth").stat().st_size < 4096
    with pytest.raises(AlignmentError, match=f"100000 x 100000 matrix.*at most {MAX_WIDTH} wide"):
        read_alignment(path)


def test_a_stride_0_expand_within_the_bound_is_read(tmp_path):
    matrix = read_alignment(_saved(tmp_path, torch.full((1,), 0.5, dtype=torch.float64).expand(8, 8)))
    np.testing.assert_array_equal(matrix, np.full((8, 8), 0.5, dtype=np.float32))


@pytest.mark.parametrize(
    "value, what",
    [
        (torch.eye(3, dtype=torch.int64), "torch.int64 array of shape"),
        (torch.eye(3, dtype=torch.complex64), "torch.complex64 array of shape"),
        ({"W": torch.eye(3)}, "holds a dict, not a matrix"),
    ],
)
def test_what_is_not_a_float_matrix_is_refused_by_name(tmp_path, value, what):
    with pytest.raises(AlignmentError, match=what):
        read_alignment(_saved(tmp_path, value))
