"""The errors of the spaCy side: Doc data, saved biLMs, training annotation."""

from __future__ import annotations

from ..elmo.errors import InputError


class DocDataError(InputError):
    """A doc's `doc._.elmo` that is not what the `elmo` component writes for that doc (keys, dtypes,
    shapes, width), or whose tokens no longer line up with those it was computed for."""


class MissingAnnotationError(InputError):
    """A component to be trained on `elmo` has none of its annotation in the training corpus."""


class AlignmentError(InputError):
    """A cross-lingual alignment matrix that is missing, not a torch-saved square matrix, or of another
    width than the vectors it maps."""


class SavedWeightsError(InputError):
    """A saved biLM whose safetensors weights are missing or cannot be read (a damaged or cut-short
    pipeline, or one not saved by this spacy-elmo)."""
