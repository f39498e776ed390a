"""The errors of the spaCy side: Doc data, saved biLMs, training annotation."""

from __future__ import annotations

from ..errors import ElmoError


class MisalignedDataError(ElmoError):
    """A doc's tokens no longer line up with the tokens its ELMo data was computed for."""


class UntrustedPickleError(ElmoError):
    """Saved biLM bytes that hold more than tensors: unpickling them could run code, so they are refused."""


class MissingAnnotationError(ElmoError):
    """A component to be trained on `elmo` has none of its annotation in the training corpus."""


class AlignmentError(ElmoError):
    """A cross-lingual alignment matrix that is missing, not a torch-saved square matrix, or of another
    width than the vectors it maps."""
