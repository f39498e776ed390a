"""The error every deliberate failure raises, so the CLI can print it without a traceback, and the
errors shared across the package. Each subpackage keeps its own in its `errors.py` (elmo/sources/hub/, elmo/pretrain/).

Each error is also the standard error of its kind, so code that knows nothing of this package handles it:
bad input is a `ValueError` (`InputError` and its subclasses), a file or network operation that failed
is an `OSError` (a full disk, a download, an unreachable cluster)."""


class ElmoError(Exception):
    """The base of every error this package raises on purpose; the message names the cause and the fix."""


class InputError(ElmoError, ValueError):
    """Bad input from the user (a value, an option, a config, a file's content); the message names it
    and the fix."""


class InputFileError(InputError):
    """A file the package reads is missing, not a file, unreadable or in the wrong format: every such
    problem, whatever the file (options, weights, a model folder or archive of no known format, a TF-Hub
    module, a catalogue, softmax, corpus, vocabulary, dump input), has this
    type, and the message names the file and what is wrong with it."""


class OutputFileError(ElmoError, OSError):
    """A file the package writes cannot be written (no permission, a full disk); the message names it."""


class DiskFullError(OutputFileError):
    """No room left where a file is written (a run directory, the model cache); the one full-disk error."""


class OptionsError(InputFileError):
    """An options.json (or options given as a dict) that cannot describe an ELMo model, or an options file
    that is missing or not JSON; the message names the file and the key."""
