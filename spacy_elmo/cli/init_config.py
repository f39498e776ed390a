"""`init-config`: a pretraining config for one of the model sizes, to edit or override."""

from pathlib import Path

import typer
from wasabi import msg

from ..elmo.errors import InputError
from .app import app


@app.command("init-config")
def init_config_command(
    preset: str = typer.Argument(..., help="Model size: tiny, small, medium or original."),
    output: Path = typer.Argument(..., dir_okay=False, help="Config file to write."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace OUTPUT if it exists."),
) -> None:
    """Write the pretraining config of PRESET, to edit or override, for `pretrain`."""
    from ..elmo.pretrain.presets import preset_config, preset_names
    from ..elmo.util.io import atomic_output

    if preset not in preset_names():
        raise InputError(f"unknown preset {preset!r}; choose one of {', '.join(preset_names())}")
    if output.exists() and not overwrite:
        raise InputError(f"{output} exists; pass --overwrite to replace it")
    with atomic_output(output) as tmp:
        tmp.write_text(preset_config(preset), encoding="utf8")
    msg.good(f"wrote {output}")
