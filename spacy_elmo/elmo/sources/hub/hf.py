"""Models kept on the Hugging Face Hub: the reference `hf:ORG/REPO[@REVISION]`, taken wherever a
catalogue name is, and `push_folder`, which uploads a folder `export` wrote.

huggingface_hub does the work, so its cache (HF_HUB_CACHE, HF_HOME), offline mode (HF_HUB_OFFLINE),
endpoint (HF_ENDPOINT) and token (HF_TOKEN, or the one `hf auth login` stored) behave as in every other
library built on it; nothing here reads those variables. It is an optional dependency, imported only
when a reference is resolved or a folder pushed: a reference is checked for its form without it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .errors import InputError, ModelNotDownloadedError, ModelReferenceError, RemoteFileError

PREFIX = "hf:"
INSTALL = "pip install 'spacy-elmo[hf]'"
# The Hub's repository names: ORG/REPO, each of letters, digits, `-`, `_` and `.`.
_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


@dataclass(frozen=True)
class HubRepo:
    """A model repository on the Hub and the revision asked for (a branch, tag or commit; None: `main`)."""

    repo_id: str
    revision: Optional[str] = None

    def __str__(self) -> str:
        return PREFIX + self.repo_id + ("" if self.revision is None else f"@{self.revision}")


def is_hf_reference(name: str) -> bool:
    """Whether `name` is meant as a Hub reference (it starts with `hf:`), well formed or not."""
    return name.startswith(PREFIX)


def parse_hf_reference(name: str) -> HubRepo:
    """The repository and revision of `hf:ORG/REPO[@REVISION]`; a malformed one fails naming the form."""
    repo_id, at, revision = name[len(PREFIX) :].partition("@")
    if not is_hf_reference(name) or not _REPO_ID.fullmatch(repo_id) or (at and not revision):
        raise ModelReferenceError(
            f"{name!r} is not a Hugging Face Hub model reference: write hf:ORG/REPO, or hf:ORG/REPO@REVISION "
            "for a branch, tag or commit"
        )
    return HubRepo(repo_id, revision or None)


def _huggingface_hub() -> Any:
    try:
        import huggingface_hub
        import huggingface_hub.constants
        import huggingface_hub.errors
    except ImportError:
        raise InputError(
            f"models on the Hugging Face Hub need huggingface_hub, which is not installed; install it with `{INSTALL}`"
        ) from None
    return huggingface_hub


def hub_snapshot(name: str, cached_only: bool = False) -> Path:
    """The folder of the repository `name` (`hf:...`) in huggingface_hub's cache, downloaded there first
    unless it is already, `cached_only` or HF_HUB_OFFLINE is set (then only the cache is read)."""
    repo = parse_hf_reference(name)
    hub = _huggingface_hub()
    errors = hub.errors
    try:
        folder = hub.snapshot_download(
            repo.repo_id,
            revision=repo.revision,
            local_files_only=cached_only,
            library_name="spacy-elmo",
        )
    except errors.LocalEntryNotFoundError:
        raise ModelNotDownloadedError(
            f"{name} is not in the Hugging Face cache ({hub.constants.HF_HUB_CACHE}) and the Hub cannot be "
            "reached or HF_HUB_OFFLINE is set. Fetch it once online (HF_HUB_OFFLINE unset), e.g. with "
            f"`hf download {repo.repo_id}`, or set HF_HUB_CACHE to a cache that holds it"
        ) from None
    except (errors.RepositoryNotFoundError, errors.RevisionNotFoundError, errors.GatedRepoError) as err:
        raise RemoteFileError(
            f"{name}: {str(err).splitlines()[0]}. Check the name and revision; a private or gated repository "
            "needs a token with access (HF_TOKEN, or `hf auth login`)"
        ) from None
    except errors.HfHubHTTPError as err:
        raise RemoteFileError(f"{name}: the Hub answered {str(err).splitlines()[0]}; try again later") from None
    return Path(folder)


def push_folder(folder: Path, repo_id: str, *, private: bool = False, message: Optional[str] = None) -> str:
    """Upload `folder` to the model repository `repo_id` (created if missing) in one commit, with the
    token huggingface_hub finds; the commit's URL. No token fails naming the two ways to give one."""
    if not _REPO_ID.fullmatch(repo_id):
        raise ModelReferenceError(f"{repo_id!r} is not a Hub repository name: write ORG/REPO")
    hub = _huggingface_hub()
    token = hub.get_token()
    if token is None:
        raise InputError(
            f"pushing to {repo_id} needs a Hugging Face token with write access: set HF_TOKEN, or run "
            "`hf auth login` once"
        )
    api = hub.HfApi(token=token, library_name="spacy-elmo")
    try:
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        commit = api.upload_folder(
            repo_id=repo_id,
            folder_path=str(folder),
            repo_type="model",
            commit_message=message or f"Upload ELMo model from {folder.name} with spacy-elmo",
        )
    except hub.errors.HfHubHTTPError as err:
        raise RemoteFileError(
            f"pushing to {repo_id} failed: {str(err).splitlines()[0]}. Check that the token may write there"
        ) from None
    return str(commit.commit_url)


__all__ = ["PREFIX", "HubRepo", "hub_snapshot", "is_hf_reference", "parse_hf_reference", "push_folder"]
