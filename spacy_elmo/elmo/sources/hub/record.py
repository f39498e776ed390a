"""The record `download` writes into a model directory (`spacy_elmo_download.json`): what was fetched
(URLs, sizes, sha256 of each download) and the sha256 of every installed file, so that
`download --verify NAME` can tell whether the cache was altered since."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Set

from ...util.io import atomic_output, file_sha256
from .cache_layout import RECORD_NAME
from .catalogue import ModelEntry


def installed_files(directory: Path) -> Dict[str, str]:
    """Relative path -> sha256 of every file in the model `directory` but the record."""
    return {
        p.relative_to(directory).as_posix(): file_sha256(p, "model file")
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != RECORD_NAME
    }


def write_record(directory: Path, entry: ModelEntry, fetched: List[Dict[str, object]]) -> None:
    """The record, written last and atomically: a model directory with a record is complete."""
    record = {
        "name": entry.name,
        "format": entry.format,
        "language": entry.language,
        "source": entry.source,
        "downloaded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "files": fetched,
        "installed": installed_files(directory),
    }
    with atomic_output(directory / RECORD_NAME) as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")


def is_complete(directory: Path) -> bool:
    return (directory / RECORD_NAME).is_file()


def _read(directory: Path) -> Dict[str, Any]:
    try:
        record = json.loads((directory / RECORD_NAME).read_text(encoding="utf8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def read_installed(directory: Path) -> Dict[str, str]:
    """The installed files' sha256 as recorded ({} for a record without them, or an unreadable one)."""
    installed = _read(directory).get("installed")
    return installed if isinstance(installed, dict) else {}


def recorded_sha256s(directory: Path) -> Set[str]:
    """Every sha256 the record holds: of the downloads and of the installed files."""
    fetched = _read(directory).get("files")
    downloads = {str(f.get("sha256")) for f in fetched if isinstance(f, dict)} if isinstance(fetched, list) else set()
    return downloads | set(read_installed(directory).values())


def alterations(directory: Path) -> List[str]:
    """How the model `directory` differs from its record: one line per changed, missing or added
    file ([] when unaltered); a record without sha256s is itself reported."""
    recorded = read_installed(directory)
    if not recorded:
        return [f"{directory / RECORD_NAME} is unreadable or records no sha256 of the installed files"]
    now = installed_files(directory)
    lines = [f"{name}: missing" for name in sorted(set(recorded) - set(now))]
    lines += [f"{name}: added" for name in sorted(set(now) - set(recorded))]
    lines += [
        f"{name}: changed (sha256 {now[name]}, recorded {recorded[name]})"
        for name in sorted(now)
        if name in recorded and now[name] != recorded[name]
    ]
    return lines
