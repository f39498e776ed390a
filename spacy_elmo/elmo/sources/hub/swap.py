"""Giving a complete model directory its final name, and recovering from a run killed on the way.

A model is built in `.NAME.PID.tmp` beside its final directory, its record written last (so a
directory with a record is complete). The swap renames an existing model to `.NAME.PID.old`, the new
one into place, then removes the old. A kill -9 at any point leaves at most these two folders; the
next run, holding the model's lock, calls `recover`: a complete new copy left between the two renames
is put in place (the old one if there is no new one), and every other leftover is removed.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Callable, List


def temp_dir(final: Path) -> Path:
    """The folder the model is built in (removed by `recover` if this run is killed)."""
    return final.with_name(f".{final.name}.{os.getpid()}.tmp")


def leftovers(final: Path) -> List[Path]:
    """`.NAME.PID.tmp` and `.NAME.PID.old` folders of `final`, newest first."""
    pattern = re.compile(rf"\.{re.escape(final.name)}\.\d+\.(tmp|old)")
    if not final.parent.is_dir():
        return []
    found = [p for p in final.parent.iterdir() if pattern.fullmatch(p.name)]
    return sorted(found, key=lambda p: (p.suffix != ".tmp", -p.stat().st_mtime))


def install(new: Path, final: Path) -> None:
    """Put the complete directory `new` at `final`, replacing what was there."""
    old = final.with_name(f".{final.name}.{os.getpid()}.old")
    if final.exists():
        os.replace(final, old)
    os.replace(new, final)
    shutil.rmtree(old, ignore_errors=True)


def recover(final: Path, complete: Callable[[Path], bool]) -> None:
    """Finish or undo what killed runs left (the caller holds the model's lock, so none is running)."""
    left = leftovers(final)
    if not final.exists():
        for folder in left:
            if complete(folder):
                os.replace(folder, final)
                left.remove(folder)
                break
    for folder in left:
        shutil.rmtree(folder, ignore_errors=True)
