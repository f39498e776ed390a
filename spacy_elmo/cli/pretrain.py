"""`pretrain`: train a biLM from a config, on one process or many (torchrun), resumable."""

import logging
import os
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from .app import app
from .signals import exit_status


@app.command("pretrain", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def pretrain_command(
    ctx: typer.Context,
    config_path: Path = typer.Argument(
        ..., dir_okay=False, help="Pretraining config (.cfg), e.g. what `init-config small pretrain.cfg` writes."
    ),
    output: Path = typer.Option(
        ...,
        "--output",
        "-o",
        file_okay=False,
        help="Run directory: checkpoint, log, plot and the exported options.json + weights.hdf5.",
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --output from its last checkpoint."),
    max_time: Optional[float] = typer.Option(
        None,
        "--max-time",
        help="Minutes after which the run stops cleanly (checkpoint and export; resume to go on), as "
        "--training.max_time: for a time-limited GPU run, give what the session has left less a few minutes.",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Train a biLM. Override any config value like `spacy train`: --training.batch_size 64."""
    from ..elmo.pretrain.config import load_config, parse_overrides
    from ..elmo.pretrain.trainer import train

    main = os.environ.get("RANK", "0") == "0"
    logging.basicConfig(level=logging.INFO if main else logging.WARNING, format="%(message)s")
    overrides = parse_overrides(ctx.args)
    if max_time is not None:
        overrides["training.max_time"] = max_time
    config = load_config(config_path, overrides)
    result = train(config, output, resume=resume, show_progress=progress)
    if result.stopped_by is not None:
        if main:
            msg.warn(f"stopped at step {result.step}; checkpoint and model in {output}: go on with --resume")
        raise typer.Exit(exit_status(result.stopped_by))
    if main:
        summary = f"{result.step} steps, {result.tokens} tokens"
        if result.heldout is not None:
            summary += f"; held-out perplexity {result.heldout.average:.2f}"
        msg.good(f"{summary}. Model in {output}: options.json + weights.hdf5")
