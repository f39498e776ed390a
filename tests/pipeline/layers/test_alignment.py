"""`spacy-elmo.AlignedPooling.v1`: a published cross-lingual alignment applied to the pooled vectors, with
an alignment made here: the map that sends the "German" model's vector of "Bank" onto the English
vector of "bank", as the published matrices do for whole vocabularies."""

import shutil

import numpy as np
import pytest
import spacy
import torch

import spacy_elmo.pipeline.architectures  # noqa: F401  (registers the layers where the installed entry points predate them)
from spacy_elmo.elmo.errors import ElmoError
from spacy_elmo.elmo.sources import MODELS_DIR
from spacy_elmo.pipeline.errors import AlignmentError
from spacy_elmo.pipeline.layers.alignment import ALIGNMENT_FILE, MAX_WIDTH, read_alignment

TINY = MODELS_DIR / "fixture-tiny"


def _nlp(lang, model_dir, alignment=None):
    nlp = spacy.blank(lang)
    pooling = "mean" if alignment is None else {"@layers": "spacy-elmo.AlignedPooling.v1", "alignment": alignment}
    model = {"@architectures": "spacy-elmo.BiLM.v2", "path": str(model_dir)}
    nlp.add_pipe("elmo", config={"model": model, "pooling": pooling})
    nlp.initialize()
    return nlp


def _reflection(source, target):
    """The orthogonal W with W @ source pointing along target (a Householder reflection)."""
    u, v = source / np.linalg.norm(source), target / np.linalg.norm(target)
    w = (u - v) / np.linalg.norm(u - v)
    return (np.eye(len(u)) - 2 * np.outer(w, w)).astype(np.float32)


def _cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def vectors():
    """The tiny model's unaligned vectors of English "bank" and of "Bank" in a German sentence."""
    english = _nlp("en", TINY)("I sat by the bank of the river")[4].vector
    german = _nlp("de", TINY)("Ich saß am Ufer , nicht auf der Bank")[8].vector
    return english, german


def test_aligned_vectors_are_w_times_v_and_land_in_englishs_space(tmp_path, vectors):
    english, german = vectors
    assert _cosine(english, german) < 0.99
    german_model = tmp_path / "de-model"
    shutil.copytree(TINY, german_model)
    W = _reflection(german, english)
    torch.save(W, german_model / ALIGNMENT_FILE)  # a NumPy array, as the published .pth files hold
    aligned = _nlp("de", german_model, alignment=str(german_model))("Ich saß am Ufer , nicht auf der Bank")[8].vector
    np.testing.assert_allclose(aligned, W @ german, rtol=1e-5, atol=1e-6)
    assert _cosine(aligned, english) == pytest.approx(1.0, abs=1e-5)


def test_a_saved_pipeline_carries_its_alignment(tmp_path, vectors):
    """Like the biLM's weights, the matrix is saved with the pipeline, which loads where it is not."""
    german_model = tmp_path / "de-model"
    shutil.copytree(TINY, german_model)
    W = _reflection(vectors[1], vectors[0])
    torch.save(W, german_model / ALIGNMENT_FILE)
    nlp = _nlp("de", german_model, alignment=str(german_model))
    text = "Ich saß am Ufer , nicht auf der Bank"
    expected = nlp(text)[8].vector
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(german_model)
    np.testing.assert_array_equal(spacy.load(tmp_path / "pipeline")(text)[8].vector, expected)


def test_a_missing_alignment_fails_at_initialize(tmp_path):
    nlp = spacy.blank("en")
    pooling = {"@layers": "spacy-elmo.AlignedPooling.v1", "alignment": str(tmp_path / "none.pth")}
    nlp.add_pipe(
        "elmo", config={"model": {"@architectures": "spacy-elmo.BiLM.v2", "path": str(TINY)}, "pooling": pooling}
    )
    with pytest.raises(ElmoError, match="no ELMo model .*none.pth"):
        nlp.initialize()


def test_a_tensor_file_is_read_too(tmp_path):
    torch.save(torch.eye(4) * 2, tmp_path / "m.pth")
    np.testing.assert_array_equal(read_alignment(str(tmp_path / "m.pth")), np.eye(4, dtype=np.float32) * 2)


def test_a_model_without_an_alignment_names_the_file_and_the_models_that_ship_one(tmp_path):
    with pytest.raises(AlignmentError, match=f"{ALIGNMENT_FILE} does not exist.*schuster-aligned"):
        read_alignment(str(TINY))


def test_a_matrix_of_another_width_or_a_crafted_pickle_is_refused(tmp_path):
    torch.save(np.eye(3, dtype=np.float32), tmp_path / ALIGNMENT_FILE)
    nlp = _nlp("en", TINY, alignment=str(tmp_path))
    with pytest.raises(AlignmentError, match="maps 3-wide vectors"):
        nlp("a bank")
    torch.save({"x": shutil.rmtree}, tmp_path / "crafted.pth")
    with pytest.raises(AlignmentError, match="not an alignment matrix"):
        read_alignment(str(tmp_path / "crafted.pth"))
    torch.save(np.ones((2, 3), dtype=np.float32), tmp_path / "wide.pth")
    with pytest.raises(AlignmentError, match="not a square float matrix"):
        read_alignment(str(tmp_path / "wide.pth"))


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
