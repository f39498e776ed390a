"""Pipelines saved by an earlier version load and give the vectors they gave when saved.

`fixtures/saved-pipeline/` was written by spacy-elmo 0.1.0 (`fixtures/make_saved_pipeline.py`): an `elmo`
component whose pooling, a fixed ScalarMix, was saved in a file of its own beside the biLM, with
parameters that differ from those its config builds."""

import json

import numpy as np
import spacy

from tests.support.paths import FIXTURES

SAVED = FIXTURES / "saved-pipeline"


def test_a_pipeline_saved_by_0_1_loads_with_its_pooling_and_gives_its_vectors():
    nlp = spacy.load(SAVED / "pipeline")
    sentences = json.loads((SAVED / "sentences.json").read_text(encoding="utf8"))
    saved = np.load(SAVED / "vectors.npz")
    for i, text in enumerate(sentences):
        np.testing.assert_allclose(np.stack([t.vector for t in nlp(text)]), saved[f"arr_{i}"], rtol=1e-6, atol=1e-6)


def test_a_pipeline_saved_by_0_1_saves_and_loads_again(tmp_path):
    nlp = spacy.load(SAVED / "pipeline")
    text = json.loads((SAVED / "sentences.json").read_text(encoding="utf8"))[0]
    nlp.to_disk(tmp_path / "again")
    again = spacy.load(tmp_path / "again")
    np.testing.assert_array_equal(np.stack([t.vector for t in again(text)]), np.stack([t.vector for t in nlp(text)]))
