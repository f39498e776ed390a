"""`export`: a model as a folder to share: options.json, the weights as safetensors and as bilm-tf's HDF5,
and a model card (spacy_elmo/elmo/sources/export.py); `push` uploads it to the Hugging Face Hub. A saved
spaCy pipeline's biLM, fine-tuned or not, comes out the same way (spacy_elmo/pipeline/pipeline_bilm.py)."""

from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..elmo.errors import InputError
from ..elmo.sources.bundled import DEFAULT_MODEL
from .app import app


@app.command("export")
def export_command(
    output: Path = typer.Argument(..., file_okay=False, help="New or empty folder to write the model into."),
    model: str = typer.Option(
        DEFAULT_MODEL,
        "--model",
        "-m",
        help="A model directory or archive of any format, a saved spaCy pipeline (its biLM as trained), a "
        "bundled or downloaded model's name (`python -m spacy_elmo models`), or hf:ORG/REPO[@REVISION].",
    ),
    component: Optional[str] = typer.Option(
        None, "--component", help="With a pipeline holding several biLMs: the component whose biLM to export."
    ),
    repo_id: Optional[str] = typer.Option(
        None, "--repo-id", help="ORG/REPO it will be pushed to, for the model card's loading lines."
    ),
) -> None:
    """Write options.json, model.safetensors, lm_weights.hdf5 (bilm-tf/AllenNLP) and README.md (the card)."""
    from ..elmo.formats import is_spacy_pipeline
    from ..elmo.sources import reference_to
    from ..elmo.sources.export import check_export_folder, export_bilm, export_model

    if component is not None and not is_spacy_pipeline(model):
        raise InputError(f"--component picks among a saved spaCy pipeline's biLMs; {model} is not a pipeline")
    if is_spacy_pipeline(model):
        from ..pipeline.pipeline_bilm import pipeline_bilm

        check_export_folder(output)

        files = export_bilm(pipeline_bilm(Path(model), component), output, f"the spaCy pipeline {model}", repo_id)
    else:
        files = export_model(reference_to(model), output, repo_id)
    msg.good(f"exported {model} to {output}", ", ".join(path.name for path in files.values()))
