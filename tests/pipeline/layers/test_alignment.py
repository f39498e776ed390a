"""`spacy-elmo.AlignedPooling.v1`: a published cross-lingual alignment applied to the pooled vectors, with
an alignment made here: the map that sends the "German" model's vector of "Bank" onto the English
vector of "bank", as the published matrices do for whole vocabularies."""

import shutil

import numpy as np
import pytest
import spacy
import torch

import spacy_elmo.pipeline.architectures  # noqa: F401  (registers the layers where the installed entry points predate them)
from spacy_elmo.errors import ElmoError
from spacy_elmo.models import MODELS_DIR
from spacy_elmo.pipeline.errors import AlignmentError
from spacy_elmo.pipeline.layers.alignment import ALIGNMENT_FILE, read_alignment

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
