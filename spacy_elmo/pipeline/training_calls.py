"""Whether the component is being run by a training loop: from inside `Language.update` (an annotating
component is piped there) or `Language.evaluate` (the loop's scoring of the dev docs).

The component's training phase starts at its first `update` but nothing tells it when training ends:
spaCy's `train` returns without a call to the pipeline, and a user's own loop need not call anything
either. What does tell is the next call that is not training's: a doc served through `nlp(text)` or
`nlp.pipe` after the last update. spaCy gives a component no sign of who called it, so the call stack is
read: one walk up the frames, only while the component is in its training phase.
"""

from __future__ import annotations

import inspect

from spacy.language import Language

_TRAINING_CODE = frozenset({Language.update.__code__, Language.evaluate.__code__})


def called_by_training() -> bool:
    """Whether `Language.update` or `Language.evaluate` is on the call stack."""
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_code in _TRAINING_CODE:
            return True
        frame = frame.f_back
    return False
