"""The errors of reading a model's files, in one place for every format."""

from __future__ import annotations

from ..errors import InputFileError


class ModelFormatError(InputFileError):
    """A directory or archive that holds no model of a known format, or more than one."""


class WeightsError(InputFileError):
    """A weights file that does not fit the options; the message names the file and the dataset."""
