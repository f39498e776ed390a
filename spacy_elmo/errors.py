"""The error type every user-facing mistake raises, so the CLI can print it without a traceback, and
the errors shared across the package. Each subpackage keeps its own in its `errors.py` (hub/, pretrain/)."""


class ElmoError(ValueError):
    """Bad input from the user (a file, an option, a config); the message names it and the fix."""


class InputFileError(ElmoError):
    """A file the package reads is missing, not a file, unreadable or in the wrong format: every such
    problem, whatever the file (options, weights, softmax, corpus, vocabulary, dump input), has this
    type, and the message names the file and what is wrong with it."""


class OutputFileError(ElmoError):
    """A file the package writes cannot be written (no permission, a full disk); the message names it."""


class DiskFullError(OutputFileError):
    """No room left where a file is written (a run directory, the model cache); the one full-disk error."""


class OptionsError(ElmoError):
    """An options.json that cannot describe an ELMo model; the message names the key."""


class OptionsFileError(OptionsError, InputFileError):
    """An options file that is missing, not JSON text, or describes no ELMo model; names the file."""
