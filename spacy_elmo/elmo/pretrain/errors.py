"""What can go wrong in pretraining, in one place; every message names the file, section or key and the fix."""

from ..errors import ElmoError, InputError, InputFileError


class ConfigError(InputError):
    """A pretraining config that cannot be used; the message names the section and key."""


class CorpusError(InputFileError):
    """Training or evaluation text that cannot be used; the message names the files."""


class TrainingError(ElmoError, RuntimeError):
    """Training cannot go on (e.g. the loss became NaN); the message says where and what to try."""
