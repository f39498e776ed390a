"""Options that other tools' habits bring to a command here that spells them otherwise: one line naming
this package's own, where click would say only "No such option". AllenNLP's `elmo` takes
`--all | --top | --average`; `dump` chooses layers with `--layers`."""

from typing import Dict, Optional, Sequence, Tuple

_DUMP_LAYERS = {flag: f"--layers {flag[2:]}" for flag in ("--all", "--top", "--average")}

POINTERS: Dict[Tuple[str, str], str] = {
    (
        "dump",
        flag,
    ): f"dump has no {flag}: give `{ours}`; `python -m spacy_elmo elmo IN OUT {flag}` writes AllenNLP's layout"
    for flag, ours in _DUMP_LAYERS.items()
}


def habit_pointer(args: Sequence[str]) -> Optional[str]:
    """The pointer for the first option of `args` (a command line after the program's name) that this
    package spells otherwise, or None."""
    if not args:
        return None
    for arg in args[1:]:
        if arg == "--":
            break
        if (args[0], arg) in POINTERS:
            return POINTERS[args[0], arg]
    return None
