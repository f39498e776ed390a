"""The errors of reading a model's files, in one place for every format."""

from __future__ import annotations

from ..errors import InputFileError


class ModelFormatError(InputFileError):
    """A directory or archive that holds no model of a known format, or more than one."""


class WeightsError(InputFileError):
    """A weights file that does not fit the options; the message names the file and the dataset."""


class ArchiveError(InputFileError):
    """A model archive that is damaged, not a zip or tar archive, too large, or holds a member that
    could escape the folder it is unpacked into."""


class UnsafeMemberError(ArchiveError):
    """An archive member that would land outside its folder or is not a plain file or folder."""


class TensorBundleError(InputFileError):
    """A tensor-bundle checkpoint that is missing a file, damaged, or holds what this reader cannot read;
    the message names the file."""


class TfHubError(InputFileError):
    """A TF-Hub module that does not hold an ELMo biLM this package can run; the message names it."""
