"""The errors of reading a model's files, in one place for every format."""

from __future__ import annotations

from ..errors import InputFileError


class WeightsError(InputFileError):
    """A weights file that does not fit the options; the message names the file and the dataset."""


class ArchiveError(InputFileError):
    """A model archive that is damaged, not a zip or tar archive, too large, or holds a member that
    could escape the folder it is unpacked into."""
