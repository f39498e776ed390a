"""Real full and read-only disks for the tests of how commands report them: a small tmpfs, or a folder
bind-mounted read-only onto itself. Both need mount rights (root in CI, where a chmod'ed folder does not
stop root); where the machine gives none, `mount_problem` says why and the tests skip with it."""

import contextlib
import shutil
import subprocess
from pathlib import Path
from typing import Iterator


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, text=True, timeout=30)


def _unmount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30)


def mount_problem(probe: Path) -> str:
    """Why this machine cannot mount a tmpfs and a read-only bind mount ('' when it can), tried once in `probe`."""
    if shutil.which("mount") is None or shutil.which("umount") is None:
        return "no mount command on this machine"
    try:
        with small_disk(probe / "disk", 1 << 16), read_only(probe / "disk"):
            pass
    except (OSError, subprocess.SubprocessError) as err:
        detail = getattr(err, "stderr", "") or str(err)
        return f"cannot mount here (needs root or CAP_SYS_ADMIN): {detail.strip()}"
    return ""


@contextlib.contextmanager
def small_disk(folder: Path, size: int) -> Iterator[Path]:
    """`folder` as a tmpfs of `size` bytes while the block runs: writes beyond it fail with ENOSPC."""
    folder.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        _unmount(folder)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """`folder` (created if missing) read-only while the block runs, for root too: EROFS on every write."""
    folder.mkdir(parents=True, exist_ok=True)
    _mount("--bind", str(folder), str(folder))
    try:
        _mount("-o", "remount,bind,ro", str(folder))
        yield folder
    finally:
        _unmount(folder)
