"""What can go wrong between the catalogue and a model on disk; every message names the model, URL or
file and what the user can do."""

from ...errors import DiskFullError as DiskFullError  # the package's one full-disk error (the cache's too)
from ...errors import ElmoError, InputError
from ...errors import InputFileError as InputFileError  # a catalogue file that cannot be used


class ModelReferenceError(InputError):
    """A model reference (`--model`, `model`, a name, a folder or `hf:ORG/REPO[@REVISION]`) that names no
    model: not in the catalogue, or not of the Hub's form; the message names the forms it may take."""


class ModelNotDownloadedError(ElmoError, FileNotFoundError):
    """A catalogue model asked for by name that is not in the cache: nothing is downloaded implicitly."""


class DownloadError(ElmoError, OSError):
    """A download that did not finish; nothing was left under the model's final name. Also: a connection
    dropped mid-file (the bytes so far are kept and the next run resumes), a file its publisher serves only
    to a browser (the message names the page and where to save it), an archive with a member that would
    land outside its folder."""


class NetworkError(DownloadError, ConnectionError):
    """The server could not be reached (no network, DNS failure, refused connection, timeout)."""


class RemoteFileError(DownloadError):
    """The server answered, but not with the file: 404 and other HTTP errors, a size or sha256 that differs
    from the catalogue's (the file is deleted), or a Hub without the repository or revision (missing,
    private, gated) or refusing a push."""
