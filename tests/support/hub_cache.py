"""A Hugging Face Hub cache made in a test, in huggingface_hub's own layout
(`models--ORG--REPO/snapshots/<commit>/FILES`, `refs/<branch>` holding the commit), read offline: the
test and the commands it runs see HF_HUB_CACHE and HF_HUB_OFFLINE=1, and huggingface_hub's constants,
which it reads from the environment once, at its import, are set to match. No network."""

import shutil
from pathlib import Path
from typing import Iterable

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def add_repo(cache: Path, repo_id: str, files: Iterable[Path], commit: str = COMMIT, branch: str = "main") -> Path:
    """Put `files` into `cache` as the snapshot `commit` of model repository `repo_id`, `branch`
    pointing at it; the snapshot folder."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.copy(path, snapshot / path.name)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / branch).write_text(commit, encoding="utf8")
    return snapshot


def offline_cache(monkeypatch, cache: Path) -> Path:
    """`cache` as the Hub cache of this test and its subprocesses, offline."""
    import huggingface_hub.constants

    cache.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return cache
