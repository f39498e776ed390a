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

from .errors import InputError, ModelNotDownloadedError, ModelReferenceError, NetworkError, RemoteFileError

PREFIX = "hf:"
INSTALL = "pip install 'spacy-elmo[hf]'"
# The Hub's repository names, as huggingface_hub's `validate_repo_id` and the Hub check them: ORG/REPO,
# each of 1 to 96 ASCII letters, digits, `-`, `_` and `.`, starting and ending with a letter, digit or `_`,
# never holding `--` or `..`, never ending in `.git`.
_NAME = r"[A-Za-z0-9_](?:[\w.-]{0,94}[A-Za-z0-9_])?"
_REPO_ID = re.compile(rf"(?a:{_NAME}/{_NAME})")
# What git-check-ref-format forbids in a branch or tag name (a commit's 40 hex digits pass): control
# characters, space, ~ ^ : ? * [ \, `..`, `@{`, the name `@`, an empty, dot-led or `.lock` component, a
# leading or trailing `/`, a trailing `.`. A component is a file name in git and in the Hub's cache:
# 255 bytes at most.
_REF_CHARS = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
MAX_REF_COMPONENT = 255


def repo_id_problem(repo_id: str) -> str:
    """Why `repo_id` is not a name the Hub allows ('' when it is)."""
    if not _REPO_ID.fullmatch(repo_id):
        return (
            "ORG and REPO are each 1 to 96 letters, digits, '-', '_' or '.', starting and ending with a "
            "letter, digit or '_'"
        )
    if "--" in repo_id or ".." in repo_id:
        return "the Hub forbids '--' and '..' in names"
    if repo_id.endswith(".git"):
        return "the Hub forbids names ending in '.git'"
    return ""


def revision_problem(revision: str) -> str:
    """Why `revision` is not a branch, tag or commit name git allows ('' when it is)."""
    try:
        revision.encode("utf8")
    except UnicodeEncodeError:
        return "it is not UTF-8 text"
    bad = _REF_CHARS.search(revision)
    if bad:
        return f"git forbids {bad.group()!r} in branch and tag names"
    if ".." in revision or "@{" in revision or revision == "@":
        return "git forbids '..', '@{' and the name '@' in branch and tag names"
    components = revision.split("/")
    if any(not part or part.startswith(".") or part.endswith(".lock") for part in components):
        return "git forbids empty components, components starting with '.' or ending in '.lock'"
    if revision.endswith("."):
        return "git forbids branch and tag names ending in '.'"
    if any(len(part.encode("utf8")) > MAX_REF_COMPONENT for part in components):
        return f"a component of a branch or tag name is at most {MAX_REF_COMPONENT} bytes"
    return ""


def check_repo_id(repo_id: str) -> str:
    """`repo_id` if the Hub allows it as a model repository's name, else a ModelReferenceError saying why."""
    problem = repo_id_problem(repo_id)
    if problem:
        raise ModelReferenceError(f"{repo_id!r} is not a Hub repository name ({problem}): write ORG/REPO")
    return repo_id


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
    """The repository and revision of `hf:ORG/REPO[@REVISION]`; a malformed one fails naming the form,
    a repository name the Hub forbids or a revision git forbids naming the rule: such a name can reach
    nothing on the Hub, and a revision with `..` would be read as a path out of the Hub's cache."""
    repo_id, at, revision = name[len(PREFIX) :].partition("@")
    problem = "" if is_hf_reference(name) and repo_id.count("/") == 1 and (revision or not at) else "malformed"
    problem = problem or repo_id_problem(repo_id)
    if problem:
        raise ModelReferenceError(
            f"{name!r} is not a Hugging Face Hub model reference ({problem}): write hf:ORG/REPO, or "
            "hf:ORG/REPO@REVISION for a branch, tag or commit"
        )
    problem = revision_problem(revision) if at else ""
    if problem:
        raise ModelReferenceError(
            f"{name!r} names the revision {revision!r}: {problem}; give a branch, tag or commit of the repository"
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
    except errors.HFValidationError as err:  # a rule of huggingface_hub's newer than the checks above
        raise ModelReferenceError(f"{name!r} is not a Hugging Face Hub model reference: {err}") from None
    return _inside_cache(Path(folder), Path(hub.constants.HF_HUB_CACHE), name)


def _inside_cache(folder: Path, cache: Path, name: str) -> Path:
    """`folder` if it lies inside the Hub's cache; a ref file in the cache holding a path (`../..`) rather
    than a commit would send huggingface_hub to a folder elsewhere, whose files are not the repository's."""
    if not folder.resolve().is_relative_to(cache.resolve()):
        raise RemoteFileError(
            f"{name}: the Hub's cache ({cache}) points it at {folder}, outside the cache: a ref file there is "
            "damaged or planted; delete the repository's folder in the cache and fetch it again"
        )
    return folder


def push_folder(folder: Path, repo_id: str, *, private: bool = False, message: Optional[str] = None) -> str:
    """Upload `folder` to the model repository `repo_id` (created if missing) in one commit, with the
    token huggingface_hub finds; the commit's URL. No token fails naming the two ways to give one."""
    check_repo_id(repo_id)
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
    except hub.errors.OfflineModeIsEnabled:
        raise NetworkError(
            f"pushing to {repo_id} needs the Hub, and HF_HUB_OFFLINE is set: unset it (or set it to 0) for the push"
        ) from None
    except Exception as err:
        if not _unreachable(err):
            raise
        raise NetworkError(
            f"pushing to {repo_id}: the Hub at {hub.constants.ENDPOINT} cannot be reached ({err}); check the "
            "network, a proxy or HF_ENDPOINT, and push again (no commit was made)"
        ) from None
    return str(commit.commit_url)


def _unreachable(err: Exception) -> bool:
    """Whether `err` says the Hub could not be reached: an OSError (refused, DNS, offline mode) or a
    transport error of the HTTP client huggingface_hub uses (httpx's, or httpx2's in newer releases:
    told by name, so that either is caught)."""
    return isinstance(err, OSError) or any(cls.__name__ == "TransportError" for cls in type(err).__mro__)


__all__ = [
    "PREFIX",
    "HubRepo",
    "check_repo_id",
    "hub_snapshot",
    "is_hf_reference",
    "parse_hf_reference",
    "push_folder",
]
