"""What lasts between windows, in the repository beside the candidate: `windows.json` (the default's
figures, every window's record), the candidate's card section listing the windows, and their picture.

Only the repository survives from one GPU window to the next, so the next window's shards are chosen
from this record (those seen fewest times first), and a candidate is compared with the default's
figures as recorded when it became the default: once a newer candidate's softmax replaces it, the
default's own perplexity can no longer be measured.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Sequence

from spacy_elmo.elmo.util.io import atomic_output

from .errors import WindowError
from .paths import PLOT_FILE, STATE_FILE

CARD_START = "<!-- windows: written by `python -m scripts.window accept` -->"
CARD_END = "<!-- /windows -->"


def load_state(path: Path) -> Dict[str, Any]:
    if not path.is_file():
        raise WindowError(f"{path} does not exist; it holds the default's figures and every window's record")
    state = json.loads(path.read_text(encoding="utf8"))
    missing = {"default", "windows"} - set(state)
    if missing:
        raise WindowError(f"{path} lacks {', '.join(sorted(missing))}; restore it from git")
    return state


def save_state(path: Path, state: Dict[str, Any]) -> None:
    with atomic_output(path) as tmp:
        tmp.write_text(json.dumps(state, indent=1) + "\n", encoding="utf8")


def write_state(folder: Path, state: Dict[str, Any], card: Path) -> None:
    """The record, its picture and the card's list of windows, all from `state`."""
    save_state(folder / STATE_FILE, state)
    plot_windows(state, folder / PLOT_FILE)
    write_card(card, card_section(state, PLOT_FILE))


def start_text(window: Dict[str, Any]) -> str:
    """A window's held-out perplexity at its start; a new line's first window starts from scratch."""
    return "scratch" if window["start"] is None else f"{window['start']['average']:.1f}"


def shards_to_send(state: Dict[str, Any], shards: Sequence[Path], max_bytes: int) -> List[Path]:
    """The packed shards for the next window within `max_bytes`: those earlier windows saw fewest times
    first (then in name order), so successive windows go round the whole corpus."""
    seen = Counter(name for window in state["windows"] for name in window.get("train_shards", []))
    chosen: List[Path] = []
    total = 0
    for shard in sorted(shards, key=lambda p: (seen[p.name], p.name)):
        size = shard.stat().st_size
        if total + size <= max_bytes:
            chosen.append(shard)
            total += size
    if not chosen:
        raise WindowError(f"no shard fits in {max_bytes:,} bytes; pack the corpus into smaller shards")
    return sorted(chosen)


def card_section(state: Dict[str, Any], plot_name: str) -> str:
    """The candidate card's list of windows, rewritten whole from the record at each window."""
    default = state["default"]
    lines = [
        CARD_START,
        "## Training windows",
        "",
        f"The default's figures: held-out perplexity {default['perplexity']:.1f}, WSD F1 on ALL "
        f'{default["wsd_f1"]:.1f} (best layer), {default["bank"]} of 4 demo "bank" sentences nearest their own '
        f"sense ({default['source']}).",
        "",
        "| window | device | steps | tokens | train s | perplexity start -> end (fp32) | WSD F1 | bank | outcome |",
        "|---|---|---:|---:|---:|---|---:|---:|---|",
    ]
    for i, w in enumerate(state["windows"], 1):
        figures = w.get("figures") or {}
        wsd = figures.get("wsd_f1")
        lines.append(
            f"| {i} ({w['date']}) | {w['device']} | {w['steps']:,} | {w['tokens']:,} | {w['train_s']:.0f} | "
            f"{start_text(w)} -> {w['end']['average']:.1f} ({w['end_fp32']['average']:.1f}) | "
            f"{'-' if wsd is None else f'{wsd:.1f}'} | {figures.get('bank', '-')} | {w['outcome']} |"
        )
    lines += ["", f"![held-out perplexity over the windows]({plot_name})", CARD_END]
    return "\n".join(lines) + "\n"


def write_card(card: Path, section: str) -> None:
    """Put `section` in place of the card's windows section, or after its text the first time."""
    text = card.read_text(encoding="utf8") if card.is_file() else ""
    if CARD_START in text and CARD_END in text:
        head, rest = text.split(CARD_START, 1)
        text = head + section + rest.split(CARD_END, 1)[1].lstrip("\n")
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section
    with atomic_output(card) as tmp:
        tmp.write_text(text, encoding="utf8")


def plot_windows(state: Dict[str, Any], png: Path) -> bool:
    """Held-out perplexity against tokens seen over all windows, one colour a window; False without
    matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    offset = 0
    for i, w in enumerate(state["windows"], 1):
        ends = [(offset + w["tokens"], w["end"]["average"])]
        if w["start"] is not None:
            ends.insert(0, (offset, w["start"]["average"]))
        (whole,) = ax.plot(*zip(*ends), "o-", label=f"window {i} ({w['outcome']}): all held-out text")
        if w["curve"]:
            during = [(offset + t, p) for t, p in w["curve"]]
            ax.plot(*zip(*during), ".:", color=whole.get_color(), label=f"window {i}: its first 50,000 tokens")
        if w["outcome"] != "dropped":
            offset += w["tokens"]
    ax.axhline(state["default"]["perplexity"], color="grey", linestyle="--", label="the default (all held-out text)")
    ax.set_xlabel("tokens seen in the windows (per direction)")
    ax.set_ylabel("held-out perplexity")
    ax.set_title("held-out perplexity: all the test books at each window's ends, a part of them during", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    with atomic_output(png) as tmp:
        fig.savefig(tmp, format="png", dpi=80)
    plt.close(fig)
    return True
