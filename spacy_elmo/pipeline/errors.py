"""The errors of the spaCy side: Doc data, saved biLMs, training annotation."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Dict, Type, TypeVar, cast

from confection import ConfigValidationError

from ..elmo.errors import ElmoError, InputError


class SpacyCommandMessage(ConfigValidationError):
    """What spaCy's commands print as one message: while they build and initialize a pipeline (`spacy
    train`, `assemble`, `debug`), their `show_validation_error` prints a ConfigValidationError's title
    and exits 1, where any other error is a traceback. `for_spacy_commands` mixes it into an error."""

    def __init__(self, message: str = "", **fields: Any) -> None:
        # spaCy makes the error again from confection's fields (`from_error`) before printing it
        if fields:
            super().__init__(**fields)
        else:
            super().__init__(title=message, show_config=False)
        self.message = message or str(fields.get("title") or "")

    def __str__(self) -> str:
        return self.message


def for_spacy_commands(error: ElmoError) -> ElmoError:
    """`error` as an error of its own type that is also a SpacyCommandMessage, with its message and
    attributes: raised from a component's `initialize`, spaCy's commands print it as one message,
    and code that catches the original type still catches it; an error mixed already is itself."""
    if isinstance(error, SpacyCommandMessage):
        return error
    mixed = _with_message(type(error))(str(error))
    mixed.__dict__.update({key: value for key, value in error.__dict__.items() if key not in mixed.__dict__})
    return mixed


def _with_message(kind: Type[ElmoError]) -> Type[Any]:
    """One mixed class per error type (made once: `except` clauses and pickles see one class)."""
    if kind not in _MIXED:
        fields = {"__module__": kind.__module__, "__doc__": kind.__doc__}
        _MIXED[kind] = type(kind.__name__, (SpacyCommandMessage, kind), fields)
    return _MIXED[kind]


_MIXED: Dict[Type[ElmoError], Type[Any]] = {}

F = TypeVar("F", bound=Callable[..., Any])


def said_by_spacy(build: F) -> F:
    """The registered `build`, raising its errors `for_spacy_commands`: a setting refused while spaCy
    builds a config (`spacy train`, `assemble`) is one message, as spaCy's own config errors are."""

    @functools.wraps(build)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return build(*args, **kwargs)
        except ElmoError as error:
            raise for_spacy_commands(error) from None

    # spaCy reads a factory's argument names from its signature, without following __wrapped__.
    call.__signature__ = inspect.signature(build)  # type: ignore[attr-defined]
    return cast(F, call)


class DocDataError(InputError):
    """A doc's `doc._.elmo` that is not what the `elmo` component writes for that doc (keys, dtypes,
    shapes, width), or whose tokens no longer line up with those it was computed for."""


class MissingAnnotationError(InputError):
    """A component to be trained on `elmo` has none of its annotation in the training corpus."""


class AlignmentError(InputError):
    """A cross-lingual alignment matrix that is missing, not a torch-saved square matrix, or of another
    width than the vectors it maps."""


class SavedWeightsError(InputError):
    """A saved biLM that does not decode, fails its digest, holds tensors its options do not build, or gives
    layers of another width than its listeners were built for (a damaged or cut-short pipeline, one not
    saved by this spacy-elmo, or parts of two pipelines)."""
