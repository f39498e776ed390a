"""The window plan's own error: a step that cannot go on, and what to do instead."""

from spacy_elmo.elmo.errors import ElmoError


class WindowError(ElmoError):
    """A window step that cannot go on; the message names the file or setting and the fix."""
