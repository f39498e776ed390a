"""What can go wrong between the catalogue and a model on disk; every message names the model, URL or
file and what the user can do."""

from ...errors import DiskFullError as DiskFullError  # the package's one full-disk error (the cache's too)
from ...errors import ElmoError, InputError


class CatalogueError(InputError):
    """The catalogue file is not valid JSON or breaks its schema (a packaging bug, or a user's own file)."""


class UnknownModelError(InputError):
    """A name that is not in the catalogue."""


class ModelNotDownloadedError(ElmoError, FileNotFoundError):
    """A catalogue model asked for by name that is not in the cache: nothing is downloaded implicitly."""


class DownloadError(ElmoError, OSError):
    """A download that did not finish; nothing was left under the model's final name."""


class NetworkError(DownloadError, ConnectionError):
    """The server could not be reached (no network, DNS failure, refused connection, timeout)."""


class RemoteFileError(DownloadError):
    """The server answered, but not with the file (404 and other HTTP errors)."""


class FetchByHandError(DownloadError):
    """A file its publisher serves only to a browser (Google Drive, figshare), not yet in the staging
    folder: the message names the page and where to save the file."""


class DownloadInterrupted(DownloadError):
    """The connection dropped mid-file; the bytes so far are kept and the next run resumes from them."""


class ChecksumError(DownloadError):
    """A file whose size or sha256 differs from the catalogue's; it was deleted."""


class UnsafeArchiveError(DownloadError):
    """An archive with an entry that would land outside its directory (absolute path, `..`, a link)."""


class HubReferenceError(InputError):
    """A Hugging Face Hub reference or repository name not of the form hf:ORG/REPO[@REVISION] (ORG/REPO)."""


class MissingHubError(InputError):
    """A Hugging Face Hub reference or push without huggingface_hub installed (the `hf` extra)."""


class NoTokenError(InputError):
    """A push to the Hub with no token set (HF_TOKEN) or stored (`hf auth login`)."""


class HubRepoError(DownloadError):
    """The Hub answered, but without the repository or revision (missing, private, gated), or refused a push."""
