"""A new size's line of windows, from scratch: its candidate folder before any window, holding the new
options, the candidate's vocabulary (so that held-out perplexities compare with the default's) and the
default's recorded figures, which the line's windows must beat.

A folder without weights is where `run` trains from the trainer's own initialization instead of
continuing a model; `accept` takes the line's first window whatever its start, and never puts a line's
model in place of the bundled default's weights: another size is bundled under its own name.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any, Dict, Mapping

from spacy_elmo.elmo.nn.options import ElmoOptions, with_changes
from spacy_elmo.elmo.pretrain.export import OPTIONS_FILE, VOCAB_FILE
from spacy_elmo.elmo.util.io import atomic_output

from .device import copy_file
from .errors import WindowError
from .paths import STATE_FILE
from .state import load_state, write_state

LINE_KEY = "line"  # in a new line's state: where it began, and how its size differs


def begin_line(candidate: Path, folder: Path, changes: Mapping[str, Any]) -> Dict[str, Any]:
    """`folder` made the candidate folder of a new size: `candidate`'s options with `changes`, its
    vocabulary, its default's figures, and a card; returns the new state."""
    if folder.exists() and any(folder.iterdir()):
        raise WindowError(f"{folder} is not empty; a new line begins in a new folder")
    options = with_changes(ElmoOptions.from_file(candidate / OPTIONS_FILE), changes)
    state = load_state(candidate / STATE_FILE)
    folder.mkdir(parents=True, exist_ok=True)
    options.to_file(folder / OPTIONS_FILE)
    copy_file(candidate / VOCAB_FILE, folder / VOCAB_FILE)
    line = {"date": datetime.date.today().isoformat(), "from": candidate.name, "changes": dict(changes)}
    new_state = {"default": state["default"], "windows": [], LINE_KEY: line}
    described = ", ".join(f"`{key}` = {json.dumps(value)}" for key, value in changes.items())
    card = folder / "README.md"
    with atomic_output(card) as tmp:
        tmp.write_text(
            f"# {folder.name}\n\nA new size, trained from scratch in GPU windows from {line['date']}: "
            f"{candidate.name}'s options with {described}, and its vocabulary.\n",
            encoding="utf8",
        )
    write_state(folder, new_state, card)
    return new_state
