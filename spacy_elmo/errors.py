"""The error type every user-facing mistake raises, so the CLI can print it without a traceback."""


class ElmoError(ValueError):
    """Bad input from the user (a file, an option, a config); the message names it and the fix."""


class InputFileError(ElmoError):
    """A file the package reads is missing, not a file, unreadable or in the wrong format: every such
    problem, whatever the file (options, weights, softmax, corpus, vocabulary, dump input), has this
    type, and the message names the file and what is wrong with it."""
