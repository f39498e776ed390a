"""The perplexity curve of a run, drawn from its JSONL log (needs matplotlib: `pip install spacy-elmo[plot]`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Union

from ..util.io import atomic_output
from .checkpoint import MetricsLog

logger = logging.getLogger(__name__)


def plot_curves(log_path: Union[str, Path], png_path: Union[str, Path]) -> bool:
    """Draw training and held-out perplexity against tokens seen; False when matplotlib is missing or
    the log has no point yet."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.warning("matplotlib is not installed; no perplexity plot (pip install matplotlib)")
        return False
    records = list(MetricsLog(log_path).records())
    train = [(r["tokens"], r["perplexity"]) for r in records if r.get("event") == "train"]
    heldout = [(r["tokens"], r["average"]) for r in records if r.get("event") == "eval"]
    curves = [
        (p, label, style) for p, label, style in ((train, "training (running)", "-"), (heldout, "held-out", "o-")) if p
    ]
    if not curves:
        return False  # a run shorter than one log interval: nothing to draw yet
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for points, label, style in curves:
        xs, ys = zip(*points)
        ax.plot(xs, ys, style, label=label)
    ax.set_xlabel("tokens seen (per direction)")
    ax.set_ylabel("perplexity")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_output(png_path) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)
    return True
