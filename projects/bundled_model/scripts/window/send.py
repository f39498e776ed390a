"""Before a window, locally: the corpus packed once into token-id shards, then, for each window, the
shards that fit beside the checkout in what the run may take along (a limit in MiB), least seen first.

    .window/packed/   every training shard and the lexicon (stays here)
    .window/train/    this window's shards and the lexicon (travels)
    .window/heldout/  the held-out text, packed (travels)
    .window/wheels/   the packages the device lacks (travels; docs/pretraining.md)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Sequence

from spacy_elmo.elmo.pretrain.shards import LEXICON_FILE, pack_corpus, shard_paths

from .paths import HELDOUT_DIR, REPO, TRAIN_DIR
from .state import shards_to_send

PACKED_DIR = "packed"
WHEELS_DIR = "wheels"
MARGIN_BYTES = 2**20  # files the session adds to the checkout between `send` and the call


def pack(train: Sequence[Path], heldout: Path, send_dir: Path, shard_tokens: int) -> Dict[str, int]:
    """Pack the training text and the held-out text; returns tokens per part."""
    for part in (PACKED_DIR, HELDOUT_DIR):
        shutil.rmtree(send_dir / part, ignore_errors=True)
    shards = pack_corpus(train, send_dir / PACKED_DIR, "train", shard_tokens)
    held = pack_corpus([heldout], send_dir / HELDOUT_DIR, "heldout", shard_tokens=10**12)
    return {"train": sum(s.n_tokens for s in shards), "heldout": held[0].n_tokens}


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def checkout_bytes(repo: Path = REPO) -> int:
    """What the checkout sends without carried folders: tracked and untracked files git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout
    paths = [repo / name for name in listed.decode("utf8").split("\0") if name]
    return sum(p.lstat().st_size for p in paths if os.path.lexists(p))


def select(state: Dict, send_dir: Path, max_bytes: int) -> List[Path]:
    """Fill `send_dir`/train with the lexicon and the next shards, within `max_bytes` for all it holds."""
    packed = send_dir / PACKED_DIR
    lexicon = packed / LEXICON_FILE
    chosen = shards_to_send(state, shard_paths(packed), max_bytes - lexicon.stat().st_size)
    target = send_dir / TRAIN_DIR
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for path in [lexicon, *chosen]:
        os.link(path, target / path.name)
    return chosen


def room_for_shards(send_dir: Path, carry_bytes: int, repo: Path = REPO) -> int:
    """Bytes left for training shards when a run may take `carry_bytes` along in all: less the
    checkout, the held-out text and the wheels."""
    carried = folder_bytes(send_dir / HELDOUT_DIR) + folder_bytes(send_dir / WHEELS_DIR)
    return carry_bytes - checkout_bytes(repo) - carried - MARGIN_BYTES
