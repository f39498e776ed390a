"""The run directory: its config, its checkpoint and its log, safe against kills at any moment.

The checkpoint is one file replaced atomically, so a kill leaves the previous checkpoint whole. It holds
everything that a resumed run needs to continue exactly where the checkpointed one was: parameters,
optimizer state, the step (which fixes the position in the data, replayed on resume), every rank's
carried LSTM states and random generator states. A directory holding another run is never overwritten.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Union

import torch
from confection import Config
from filelock import FileLock, Timeout

from ..util.io import atomic_output, atomic_stream, remove_stale_temps
from .config import RESUMABLE_CHANGES, config_differences
from .errors import InputError

LOCK_FILE = ".lock"
CONFIG_FILE = "config.cfg"
CHECKPOINT_FILE = "checkpoint.pt"
LOG_FILE = "log.jsonl"


def check_run_dir(output_dir: Union[str, Path], config: Config, resume: bool) -> None:
    """Check that `output_dir` is empty or missing, or holds this same run when resuming."""
    output_dir = Path(output_dir)
    if output_dir.exists() and not output_dir.is_dir():
        raise InputError(f"output {output_dir} is a file; give a directory")
    entries = [p.name for p in output_dir.iterdir() if p.name != LOCK_FILE] if output_dir.is_dir() else []
    config_path = output_dir / CONFIG_FILE
    if entries and not resume:
        raise InputError(
            f"output directory {output_dir} is not empty ({', '.join(sorted(entries)[:4])}"
            f"{' ...' if len(entries) > 4 else ''}); pass --resume to continue the run it holds, or choose "
            "a new directory"
        )
    if entries and resume:
        if not config_path.is_file():
            raise InputError(
                f"output directory {output_dir} holds files but no {CONFIG_FILE}: it is not a "
                "pretraining run; choose a new directory"
            )
        saved = Config().from_disk(config_path)
        differences = [k for k in config_differences(saved, config) if k not in RESUMABLE_CHANGES]
        if differences:
            raise InputError(
                f"output directory {output_dir} holds another run: its config differs in {', '.join(differences)}. "
                f"Resume with the same settings (only {', '.join(sorted(RESUMABLE_CHANGES))} may change) "
                "or choose a new directory"
            )


@contextlib.contextmanager
def run_lock(output_dir: Union[str, Path], enabled: bool = True) -> Iterator[None]:
    """Hold the run directory for this process (rank 0: the one that writes) while the block runs: a
    second run in the same directory at the same time would take the first's files from under it. The
    lock goes with the process, so a killed run leaves nothing to clean up."""
    if not enabled:
        yield
        return
    output_dir = Path(output_dir)
    created = not output_dir.exists()
    output_dir.mkdir(parents=True, exist_ok=True)
    fresh = not [p for p in output_dir.iterdir() if p.name != LOCK_FILE]
    lock = FileLock(output_dir / LOCK_FILE)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise InputError(
            f"another pretraining run is using {output_dir} right now; wait for it to end (or stop it) "
            "before resuming, or choose another --output"
        ) from None
    try:
        yield
    except BaseException:
        if fresh and {p.name for p in output_dir.iterdir()} <= {LOCK_FILE, CONFIG_FILE}:
            # Failed before its first checkpoint (bad input found after the lock was taken, a first step
            # too large for memory): leave no trace of the run, as before it, so the corrected command
            # is not refused as "not empty".
            (output_dir / CONFIG_FILE).unlink(missing_ok=True)
            if created:
                (output_dir / LOCK_FILE).unlink()
                output_dir.rmdir()
        raise
    finally:
        lock.release()


def write_config(output_dir: Union[str, Path], config: Config) -> None:
    """Record the run's config, and sweep away the temporary files of writes a kill interrupted."""
    output_dir = Path(output_dir)
    remove_stale_temps(output_dir)
    with atomic_output(output_dir / CONFIG_FILE) as tmp:
        config.to_disk(tmp)


def save_checkpoint(path: Union[str, Path], payload: Dict[str, Any]) -> None:
    with atomic_stream(path) as f:
        torch.save(payload, f)


def load_checkpoint(path: Union[str, Path]) -> Optional[Dict[str, Any]]:
    """The checkpoint's payload, or None when there is none yet."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for a damaged file
        raise InputError(
            f"checkpoint {path} cannot be read ({err}); it was not written by this trainer "
            "or the disk lost it; move it away to restart the run"
        ) from None


class MetricsLog:
    """The learning curve as JSON lines, one record per event ({"event": "train" | "eval" | ...})."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = Path(path)

    def append(self, record: Dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf8") as f:
            f.write(json.dumps(record) + "\n")

    def records(self) -> Iterator[Dict[str, Any]]:
        if not self.path.is_file():
            return
        with self.path.open(encoding="utf8") as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError:
                        continue  # the last line of a killed run may be cut short

    def truncate(self, step: int) -> None:
        """Forget records after `step`: a resumed run recomputes them."""
        kept: List[Dict[str, Any]] = [r for r in self.records() if r.get("step", 0) <= step]
        with atomic_output(self.path) as tmp:
            tmp.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf8")
