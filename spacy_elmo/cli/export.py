"""`export`: a model as a folder to share: options.json, the weights as safetensors and as bilm-tf's HDF5,
and a model card (spacy_elmo/elmo/sources/export.py); `push` uploads it to the Hugging Face Hub."""

from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..elmo.sources.bundled import DEFAULT_MODEL
from .app import app


@app.command("export")
def export_command(
    output: Path = typer.Argument(
        ..., file_okay=False, help="New or empty folder (or a clone of the Hub repository) to write the model into."
    ),
    model: str = typer.Option(
        DEFAULT_MODEL,
        "--model",
        "-m",
        help="A model directory or archive of any format, a bundled or downloaded model's name "
        "(`python -m spacy_elmo models`), or hf:ORG/REPO[@REVISION].",
    ),
    repo_id: Optional[str] = typer.Option(
        None, "--repo-id", help="ORG/REPO it will be pushed to, for the model card's loading lines."
    ),
) -> None:
    """Write options.json, model.safetensors, lm_weights.hdf5 (bilm-tf/AllenNLP) and README.md (the card)."""
    from ..elmo.sources import reference_to
    from ..elmo.sources.export import export_model

    files = export_model(reference_to(model), output, repo_id)
    msg.good(f"exported {model} to {output}", ", ".join(path.name for path in files.values()))
